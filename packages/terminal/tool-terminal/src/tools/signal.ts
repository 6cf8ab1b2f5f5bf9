import { TERMINAL_SIGNALS } from 'dsh-terminal'
import { defineTool } from 'dsh-tools'
import { z } from 'zod'
import { signalText } from '../render/texts'
import { finalizeWith, fittedOutput, sessionIdParam, toSessionId, type ToolDeps } from './tool-parts'

/** Parameters of terminal_signal: the signal is one of a closed set. */
export const signalParameters = z.strictObject({
  sessionId: sessionIdParam,
  signal: z
    .enum(TERMINAL_SIGNALS)
    .describe(
      'SIGINT interrupts the running command (like Ctrl-C); SIGTSTP suspends it; SIGTERM and SIGHUP ask it to end; ' +
        'SIGKILL forces it (refused for the shell itself: use terminal_close).',
    ),
})

/** terminal_signal: deliver one signal to whatever process group owns the terminal's foreground now. */
export function signalTool({ terminals, config }: ToolDeps) {
  return defineTool({
    name: 'terminal_signal',
    description:
      'Send a signal to the foreground process group of a terminal session, e.g. SIGINT to stop a command that hangs or runs too long. ' +
      'Follow with terminal_read or an empty terminal_send to see where the session is.',
    kind: 'execute',
    parameters: signalParameters,
    async execute(args, call) {
      const sessionId = toSessionId(args.sessionId)
      const result = await terminals.signal(call.agent, sessionId, args.signal)
      const meta = { sessionId, signal: args.signal, delivered: result.delivered, targetPgid: result.targetPgid }
      return fittedOutput({ body: signalText(args.signal, result.targetPgid) }, config.maxResultBytes, meta)
    },
    present: (args) => ({ kind: 'execute', title: `${args.signal} ${args.sessionId}` }),
    finalizeContent: finalizeWith(config),
  })
}
