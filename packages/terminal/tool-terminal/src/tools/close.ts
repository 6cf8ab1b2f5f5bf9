import { defineTool } from 'dsh-tools'
import { z } from 'zod'
import { closeText } from '../render/texts'
import { finalizeWith, fittedOutput, sessionIdParam, toSessionId, type ToolDeps } from './tool-parts'

/** Parameters of terminal_close. */
export const closeParameters = z.strictObject({ sessionId: sessionIdParam })

/** terminal_close: end a session and every process in it; returns once nothing of it is left running. */
export function closeTool({ terminals, config }: ToolDeps) {
  return defineTool({
    name: 'terminal_close',
    description:
      'Close a terminal session: stops every process started in it and frees it. Its state (cwd, variables, REPL) is lost. ' +
      'Close each session as soon as you no longer need it.',
    kind: 'delete',
    parameters: closeParameters,
    async execute(args, call) {
      const sessionId = toSessionId(args.sessionId)
      const closedNow = await terminals.close(call.agent, sessionId, 'closed by terminal_close')
      return fittedOutput({ body: closeText(sessionId, closedNow) }, config.maxResultBytes, { sessionId, closed: closedNow })
    },
    present: (args) => ({ kind: 'delete', title: `close ${args.sessionId}` }),
    finalizeContent: finalizeWith(config),
  })
}
