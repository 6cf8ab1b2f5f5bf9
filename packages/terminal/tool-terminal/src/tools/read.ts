import { defineTool } from 'dsh-tools'
import { z } from 'zod'
import { inputMeta, readLayout } from '../render/texts'
import { finalizeWith, fittedOutput, inputStateOf, sessionIdParam, toSessionId, type ToolDeps } from './shared'

/** Lines returned by terminal_read when `count` is omitted. */
export const DEFAULT_READ_COUNT = 500

/** Parameters of terminal_read. */
export const readParameters = z.strictObject({
  sessionId: sessionIdParam,
  offset: z
    .number()
    .int('offset must be a whole number of lines')
    .min(0, 'offset must be 0 or more')
    .optional()
    .describe('Lines to skip back from the newest retained line. 0 (default) reads the newest page; to page back, add the previous count.'),
  count: z
    .number()
    .int('count must be a whole number of lines')
    .min(1, 'count must be at least 1')
    .default(DEFAULT_READ_COUNT)
    .describe(`Maximum lines to return (default ${DEFAULT_READ_COUNT}). The page is also capped in bytes.`),
})

/** terminal_read: a page of retained scrollback, to recover output a send did not show (or a cancelled send's). */
export function readTool({ ctx, config }: ToolDeps) {
  return defineTool({
    name: 'terminal_read',
    description:
      'Read retained output of a terminal session without sending anything: the newest lines by default, older ones with offset. ' +
      'Use it to see output produced after a send returned, or when a result was truncated. [lines: <begin>-<end> of <total>] says which lines you got; ' +
      '[input: …] what the terminal waits for now.',
    kind: 'read',
    parameters: readParameters,
    async execute(args, call) {
      const sessionId = toSessionId(args.sessionId)
      const request = { count: args.count, ...(args.offset === undefined ? {} : { offset: args.offset }) }
      const page = ctx.terminals.read(call.agent, sessionId, request)
      const input = await inputStateOf(ctx, call.agent, sessionId)
      const meta: Record<string, unknown> = { sessionId, totalLines: page.totalLines, lineBegin: page.lineBegin, lineEnd: page.lineEnd }
      if (input) meta.input = inputMeta(input)
      return fittedOutput(readLayout(page, input), config.maxResultBytes, meta)
    },
    present: (args) => ({ kind: 'read', title: `read ${args.sessionId}` }),
    finalizeContent: finalizeWith(config),
  })
}
