import { defineTool } from 'dsh-tools'
import { z } from 'zod'
import { listLayout } from '../render/texts'
import { finalizeWith, fittedOutput, type ToolDeps } from './shared'

/** terminal_list takes no arguments (and refuses unknown ones). */
export const listParameters = z.strictObject({})

/** terminal_list: the calling agent's sessions, so it can recover ids it lost track of. */
export function listTool({ ctx, config }: ToolDeps) {
  return defineTool({
    name: 'terminal_list',
    description: 'List your open terminal sessions, one per line: id, name, type, status and pid. Use it to recover session ids and to find sessions to close.',
    kind: 'read',
    parameters: listParameters,
    execute(_args, call) {
      const snapshots = ctx.terminals.list(call.agent)
      const sessions = snapshots.map((snapshot) => ({ ...snapshot, status: { ...snapshot.status } }))
      return fittedOutput(listLayout(snapshots), config.maxResultBytes, { sessions })
    },
    present: () => ({ kind: 'read', title: 'list terminal sessions' }),
    finalizeContent: finalizeWith(config),
  })
}
