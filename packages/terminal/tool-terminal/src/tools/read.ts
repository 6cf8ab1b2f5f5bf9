import type { Agent } from 'dsh-agent'
import { TERMINAL_READ_VIEWS, type TerminalReadRequest, type TerminalSessionId } from 'dsh-terminal'
import { defineTool, type ToolOutput } from 'dsh-tools'
import { z } from 'zod'
import type { TerminalToolsConfig } from '../config'
import { noScreen } from '../errors'
import { inputMeta, readLayout, screenMeta, screenReadLayout } from '../render/texts'
import { finalizeWith, fittedOutput, inputStateOf, maxBytesParam, sessionIdParam, toSessionId, type ToolDeps } from './tool-parts'

/** Lines returned by terminal_read when `count` is omitted. */
export const DEFAULT_READ_COUNT = 500

/** The paging arguments of the lines view, which the screen view does not take. */
const PAGING_KEYS = ['offset', 'fromLine', 'count'] as const

/**
 * Parameters of terminal_read; `maxBytes` is bounded by the configured `maxResultBytes`. `count`
 * has no schema default so that a screen read can refuse it; the lines view applies
 * {@link DEFAULT_READ_COUNT}.
 */
export function readParameters(config: Pick<TerminalToolsConfig, 'maxResultBytes' | 'defaultMaxBytes'>) {
  return z
    .strictObject({
      sessionId: sessionIdParam,
      view: z
        .enum(TERMINAL_READ_VIEWS)
        .optional()
        .describe(
          '"lines" (default): the retained output, a page of lines. "screen": what the terminal shows now, its rows under ' +
            '[screen: <cols> cols x <rows> rows, cursor at row <row>, col <col>, alternate]; use it for full-screen programs (vim, less, top, menus). Not with offset, fromLine or count.',
        ),
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
        .optional()
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
      if (args.view !== 'screen') return
      for (const key of PAGING_KEYS) {
        if (args[key] === undefined) continue
        issues.addIssue({
          code: 'custom',
          path: [key],
          message: `${key} pages the line history; view "screen" shows the screen as it is now: leave ${key} out, or read lines without view`,
        })
      }
    })
}

/**
 * terminal_read: a page of retained scrollback, to recover output a send did not show (or a cancelled
 * send's), or with `view: "screen"` what the terminal shows now.
 */
export function readTool(deps: ToolDeps) {
  const { ctx, terminals, config } = deps
  return defineTool({
    name: 'terminal_read',
    description:
      'Read retained output of a terminal session without sending anything: the newest lines by default, older ones with offset. ' +
      'Use it to see output produced after a send returned, or when a result was truncated. [lines: <begin>-<end> of <total>] says which lines you got; ' +
      '[input: …] what the terminal waits for now. view "screen" shows the screen of a full-screen program (vim, less, top) instead.',
    kind: 'read',
    parameters: readParameters(config),
    async execute(args, call) {
      const sessionId = toSessionId(args.sessionId)
      if (args.view === 'screen') return readScreen(deps, call.agent, sessionId, args.maxBytes)
      const request: TerminalReadRequest = { count: args.count ?? DEFAULT_READ_COUNT }
      if (args.offset !== undefined) request.offset = args.offset
      if (args.fromLine !== undefined) request.fromLine = args.fromLine
      const page = terminals.read(call.agent, sessionId, request)
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
    present: (args) => ({ kind: 'read', title: `read ${args.sessionId}${args.view === 'screen' ? ' screen' : ''}` }),
    finalizeContent: finalizeWith(config),
  })
}

/**
 * The screen of `sessionId` as it is now, with what the terminal waits for (both looked at
 * concurrently); NO_SCREEN when the backend keeps no screen or the session is closing.
 */
async function readScreen({ ctx, terminals, config }: ToolDeps, owner: Agent, sessionId: TerminalSessionId, maxBytes: number | undefined): Promise<ToolOutput> {
  const [screen, input] = await Promise.all([terminals.screen(owner, sessionId), inputStateOf(ctx, owner, sessionId)])
  if (!screen) throw noScreen(sessionId)
  const meta: Record<string, unknown> = { sessionId, screen: screenMeta(screen) }
  if (input) meta.input = inputMeta(input)
  return fittedOutput(screenReadLayout(screen, input), maxBytes ?? config.defaultMaxBytes, meta, { foldRepeats: config.foldRepeatedLines })
}
