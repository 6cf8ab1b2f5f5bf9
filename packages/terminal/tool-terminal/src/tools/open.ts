import type { TerminalSpawnRequest } from 'dsh-terminal'
import { defineTool } from 'dsh-tools'
import { z } from 'zod'
import { openLayout } from '../render/texts'
import { resumeSession } from './resume'
import { finalizeWith, fittedOutput, type ToolDeps } from './tool-parts'
import { checkWindowSize, colsParam, rowsParam, windowSizeOf } from './window-size'

/**
 * Parameters of terminal_open; strict, so a misspelled argument is an error rather than ignored.
 * `rows` and `cols` come together or not at all.
 */
export const openParameters = z
  .strictObject({
    type: z
      .string()
      .min(1, 'type must name a terminal backend, e.g. "shell"')
      .describe('Backend to start: "shell" is a persistent bash. Any other value must be a registered backend type.'),
    name: z
      .string()
      .min(1, 'name, when given, must not be empty')
      .max(64, 'name must be at most 64 characters')
      .optional()
      .describe('Optional short label shown in terminal_list, unique among your sessions. Never use it as the id.'),
    cwd: z
      .string()
      .min(1, 'cwd, when given, must not be empty')
      .optional()
      .describe("Optional starting directory (an existing absolute path). Defaults to the backend's working directory."),
    target: z
      .string()
      .min(1, 'target, when given, must name a target of this host, e.g. "build-1"')
      .max(63, 'target must be at most 63 characters')
      .optional()
      .describe(
        'Optional: where the session runs, a target this host is configured with (another machine over ssh, a container). ' +
          "Default: the host's default target. Give cwd as an absolute path there.",
      ),
    resume: z
      .string()
      .min(1, 'resume, when given, must be the id of a detached session, e.g. "pty-3" (terminal_list marks them detached)')
      .optional()
      .describe(
        'Adopt a detached session instead of starting one: the id of a session terminal_list marks "detached" (its agent disconnected). ' +
          'Returns the output it produced since its last result was delivered, then the usual [wait: …] lines; its cwd, environment, jobs and REPL are as they were. ' +
          'Not with name, cwd, rows, cols or target.',
      ),
    rows: rowsParam("Optional window height in rows, with cols (default: the backend's size). Full-screen programs draw for this size."),
    cols: colsParam('Optional window width in columns, with rows.'),
  })
  .superRefine((args, issues) => {
    checkWindowSize(args, issues)
    if (args.resume === undefined) return
    for (const key of ['name', 'cwd', 'rows', 'cols', 'target'] as const) {
      if (args[key] !== undefined) {
        issues.addIssue({ code: 'custom', path: [key], message: `${key} does not go with resume: a resumed session keeps its own` })
      }
    }
  })

/**
 * terminal_open: start a session owned by the calling agent and return its id and startup output.
 * The tool call's signal cancels an unfinished startup.
 */
export function openTool(deps: ToolDeps) {
  const { terminals, config } = deps
  return defineTool({
    name: 'terminal_open',
    description:
      'Start a persistent terminal session that keeps its state (cwd, environment variables, running REPLs) between calls. ' +
      'Returns the session id (pty-N) to pass to terminal_send, terminal_read, terminal_signal and terminal_close. ' +
      'Close it with terminal_close when done. Prefer one-shot command tools when no state needs to persist. ' +
      'With resume (an id terminal_list marks detached), adopt a session whose agent disconnected instead.',
    kind: 'execute',
    parameters: openParameters,
    async execute(args, call) {
      if (args.resume !== undefined) return resumeSession(deps, call.agent, { type: args.type, resume: args.resume }, call.signal, call.callId)
      const request: TerminalSpawnRequest = { type: args.type }
      if (args.name !== undefined) request.name = args.name
      if (args.cwd !== undefined) request.cwd = args.cwd
      if (args.target !== undefined) request.target = args.target
      const size = windowSizeOf(args)
      if (size) request.size = size
      const opened = await terminals.spawn(call.agent, request, call.signal)
      const meta: Record<string, unknown> = { sessionId: opened.sessionId, type: opened.type, sessionStatus: opened.status }
      if (opened.name !== undefined) meta.name = opened.name
      if (opened.target !== undefined) meta.target = opened.target
      if (opened.pid !== undefined) meta.pid = opened.pid
      if (opened.size !== undefined) meta.size = { rows: opened.size.rows, cols: opened.size.cols }
      return fittedOutput(openLayout(opened), config.maxResultBytes, meta)
    },
    present: (args) => ({ kind: 'execute', title: `open ${args.type} terminal${args.name === undefined ? '' : ` ${args.name}`}` }),
    finalizeContent: finalizeWith(config),
  })
}
