import type { TerminalReadRequest } from 'dsh-terminal'
import { defineTool } from 'dsh-tools'
import { z } from 'zod'
import type { TerminalToolsConfig } from '../config'
import { inputMeta, readLayout } from '../render/texts'
import { finalizeWith, fittedOutput, inputStateOf, maxBytesParam, sessionIdParam, toSessionId, type ToolDeps } from './shared'

/** Lines returned by terminal_read when `count` is omitted. */
export const DEFAULT_READ_COUNT = 500

/** Parameters of terminal_read; `maxBytes` is bounded by the configured `maxResultBytes`. */
export function readParameters(config: Pick<TerminalToolsConfig, 'maxResultBytes' | 'defaultMaxBytes'>) {
  return z
    .strictObject({
      sessionId: sessionIdParam,
      offset: z
        .number()
        .int('offset must be a whole number of lines')
        .min(0, 'offset must be 0 or more')
        .optional()
        .describe('Lines to skip back from the newest retained line. 0 (default) reads the newest page; to page back, add the previous count.'),
      fromLine: z
        .number()
        .int('fromLine must be a whole line number')
        .min(1, 'fromLine must be at least 1 (the first line the session printed)')
        .optional()
        .describe(
          'Read forward from this absolute line number instead (lines are numbered from 1 since the session started, as [lines: …] shows); ' +
            'a result that left lines out names the fromLine and count that return them.',
        ),
      count: z
        .number()
        .int('count must be a whole number of lines')
        .min(1, 'count must be at least 1')
        .default(DEFAULT_READ_COUNT)
        .describe(`Maximum lines to return (default ${DEFAULT_READ_COUNT}). The page is also capped in bytes.`),
      maxBytes: maxBytesParam(config),
    })
    .superRefine((args, issues) => {
      if (args.offset !== undefined && args.fromLine !== undefined) {
        issues.addIssue({
          code: 'custom',
          path: ['fromLine'],
          message: 'give either offset (back from the newest line) or fromLine (forward from a line number), not both',
        })
      }
    })
}

/** terminal_read: a page of retained scrollback, to recover output a send did not show (or a cancelled send's). */
export function readTool({ ctx, config }: ToolDeps) {
  return defineTool({
    name: 'terminal_read',
    description:
      'Read retained output of a terminal session without sending anything: the newest lines by default, older ones with offset. ' +
      'Use it to see output produced after a send returned, or when a result was truncated. [lines: <begin>-<end> of <total>] says which lines you got; ' +
      '[input: …] what the terminal waits for now.',
    kind: 'read',
    parameters: readParameters(config),
    async execute(args, call) {
      const sessionId = toSessionId(args.sessionId)
      const request: TerminalReadRequest = { count: args.count }
      if (args.offset !== undefined) request.offset = args.offset
      if (args.fromLine !== undefined) request.fromLine = args.fromLine
      const page = ctx.terminals.read(call.agent, sessionId, request)
      const input = await inputStateOf(ctx, call.agent, sessionId)
      const meta: Record<string, unknown> = {
        sessionId,
        totalLines: page.totalLines,
        lineBegin: page.lineBegin,
        lineEnd: page.lineEnd,
        oldestLine: page.oldestLine,
      }
      if (input) meta.input = inputMeta(input)
      const shaping = { foldRepeats: config.foldRepeatedLines }
      const back = { sessionId, windowBytes: config.defaultMaxBytes, maxResultBytes: config.maxResultBytes }
      return fittedOutput(readLayout(page, input, back), args.maxBytes ?? config.defaultMaxBytes, meta, shaping)
    },
    present: (args) => ({ kind: 'read', title: `read ${args.sessionId}` }),
    finalizeContent: finalizeWith(config),
  })
}
