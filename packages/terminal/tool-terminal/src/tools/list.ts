import { defineTool } from 'dsh-tools'
import { z } from 'zod'
import { inputMeta, listLayout } from '../render/texts'
import { finalizeWith, fittedOutput, inputStateOf, type ToolDeps } from './tool-parts'

/** terminal_list takes no arguments (and refuses unknown ones). */
export const listParameters = z.strictObject({})

/** terminal_list: the calling agent's sessions, so it can recover ids it lost track of. */
export function listTool({ ctx, terminals, config }: ToolDeps) {
  return defineTool({
    name: 'terminal_list',
    description:
      'List your open terminal sessions, one per line: id, name, type, status, pid, size (cols x rows, as 80x24), human=watching|typing while a person is attached ' +
      '(dsh-terminal attach), and [input: …], what its terminal waits for now. ' +
      'A line marked "detached 2m ago" is a session whose agent disconnected: adopt it with terminal_open {"type": "shell", "resume": "<id>"}. ' +
      'A line "target <name> unreachable: <reason>" names a machine that did not answer in time: its detached sessions are missing; list again once it is back. ' +
      'Use it to recover session ids and to find sessions to close.',
    kind: 'read',
    parameters: listParameters,
    async execute(_args, call) {
      // Then the sessions other host processes detached (empty unless sessions are kept detached).
      const snapshots = [...terminals.list(call.agent), ...(await terminals.listElsewhere(call.agent))]
      // The machines that listing could not ask in time: their sessions are missing, and it says so.
      const unreachable = terminals.unreachableTargets()
      // Every session is looked at concurrently: one slow or failing backend only loses its own line part.
      const inputs = await Promise.all(snapshots.map((snapshot) => inputStateOf(ctx, call.agent, snapshot.sessionId)))
      const sessions = snapshots.map((snapshot, index) => {
        const input = inputs[index]
        const size = snapshot.size ? { size: { rows: snapshot.size.rows, cols: snapshot.size.cols } } : {}
        return { ...snapshot, status: { ...snapshot.status }, ...size, ...(input ? { input: inputMeta(input) } : {}) }
      })
      return fittedOutput(listLayout(snapshots, inputs, unreachable), config.maxResultBytes, {
        sessions,
        ...(unreachable.length ? { unreachableTargets: unreachable.map(({ target, reason }) => ({ target, reason })) } : {}),
      })
    },
    present: () => ({ kind: 'read', title: 'list terminal sessions' }),
    finalizeContent: finalizeWith(config),
  })
}
