import { closeHosts, type Discovery, discoverHosts } from './discover'
import { describeError } from './host-client'
import { formatSessionTable } from './table'
import { runAttachedSession } from './terminal-session'

/** Options of {@link runAttach}. */
export interface AttachCommandOptions {
  /** The session to attach to (`pty-3`, or `<host pid>:pty-3` when several hosts have one); without it, list. */
  sessionId?: string
  /** Watch only (`--read-only`). */
  readOnly?: boolean
}

/**
 * `dsh-terminal attach [session] [--read-only]`: list the sessions of every running host of this user,
 * or attach to one. Resolves with the exit code: 0 listed, detached or ended; 1 on any error.
 */
export async function runAttach(options: AttachCommandOptions): Promise<number> {
  const qualified = options.sessionId ? /^(\d+):(.+)$/.exec(options.sessionId) : null
  let discovery: Discovery
  try {
    // `<host pid>:<session>` asks that host alone.
    discovery = await discoverHosts(undefined, qualified ? Number(qualified[1]) : undefined)
  } catch (error) {
    return fail(error)
  }
  for (const line of discovery.skipped) process.stderr.write(`dsh-terminal attach: ${line}\n`)
  if (!options.sessionId) {
    process.stdout.write(formatSessionTable(discovery.hosts))
    closeHosts(discovery)
    return 0
  }
  const sessionId = qualified ? qualified[2]! : options.sessionId
  if (qualified && !discovery.livePids.includes(Number(qualified[1]))) {
    const hosts = discovery.livePids.length
      ? `running hosts: ${discovery.livePids.join(', ')}; \`dsh-terminal attach\` lists their sessions`
      : 'no host is running'
    process.stderr.write(`dsh-terminal attach: no running host has pid ${qualified[1]} (${hosts}) (NO_HOST)\n`)
    return 1
  }
  const matches = discovery.hosts.filter(
    ({ host, sessions }) => (!qualified || host.pid === Number(qualified[1])) && sessions.some((session) => session.sessionId === sessionId),
  )
  if (matches.length > 1) {
    closeHosts(discovery)
    const choices = matches.map(({ host }) => `${host.pid}:${sessionId}`).join(', ')
    process.stderr.write(`dsh-terminal attach: several hosts have a ${sessionId}; name one as <host pid>:<session>: ${choices} (AMBIGUOUS_SESSION)\n`)
    return 1
  }
  const found = matches[0]
  closeHosts(discovery, found?.client)
  if (!found) {
    // Which host holds which sessions, so a qualified name can be picked from the message.
    const held = discovery.hosts.filter(({ sessions }) => sessions.length > 0)
    const hint = held.length
      ? `running sessions: ${held.map(({ host, sessions }) => `host ${host.pid}: ${sessions.map((session) => session.sessionId).join(', ')}`).join('; ')}`
      : qualified
        ? `host ${qualified[1]} has no session`
        : 'no host has any session'
    process.stderr.write(`dsh-terminal attach: no running host has session ${sessionId} (${hint}) (NO_SESSION)\n`)
    return 1
  }
  try {
    return await runAttachedSession(found.client, sessionId, options.readOnly === true, process)
  } catch (error) {
    found.client.close()
    return fail(error)
  }
}

function fail(error: unknown): number {
  process.stderr.write(`dsh-terminal attach: ${describeError(error)}\n`)
  return 1
}
