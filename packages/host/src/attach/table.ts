import type { HumanSessionEntry } from '../human/gateway'
import type { DiscoveredHost } from './discover'

const COLUMNS = ['HOST PID', 'SESSION', 'NAME', 'OWNER', 'INPUT', 'HUMAN', 'STATUS'] as const

/** One session's cells, in {@link COLUMNS} order. */
function row(pid: number, session: HumanSessionEntry): string[] {
  const input = session.input ? session.input.kind + ('program' in session.input && session.input.program ? ` (${session.input.program.name})` : '') : '-'
  return [String(pid), session.sessionId, session.name ?? '-', session.ownerId, input, session.human ?? '-', statusText(session)]
}

function statusText(session: HumanSessionEntry): string {
  const status = session.status
  if (status.kind === 'running') return 'running'
  return `exited (${status.signal ?? `code ${status.exitCode}`})`
}

/**
 * The `dsh-terminal attach` listing: one aligned row per session of every host, then where each host
 * runs, then how to attach. Says so plainly when no host or no session is there.
 */
export function formatSessionTable(hosts: readonly DiscoveredHost[]): string {
  const rows = hosts.flatMap(({ host, sessions }) => sessions.map((session) => row(host.pid, session)))
  if (hosts.length === 0) return 'No running dsh-terminal host (start one with `dsh-terminal`, or let your MCP client start it).\n'
  const hostLines = hosts.map(
    ({ host, sessions }) => `  host ${host.pid}: ${sessions.length} session(s), cwd ${host.cwd}${host.configPath ? `, config ${host.configPath}` : ''}`,
  )
  if (rows.length === 0) return `No terminal sessions yet.\n${hostLines.join('\n')}\n`
  const widths = COLUMNS.map((title, index) => Math.max(title.length, ...rows.map((cells) => cells[index]!.length)))
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, index) => cell.padEnd(widths[index]!))
      .join('  ')
      .trimEnd()
  return [line(COLUMNS), ...rows.map(line), '', ...hostLines, '', 'Attach with: dsh-terminal attach <session> [--read-only]   (Ctrl-] detaches)', ''].join('\n')
}
