import { existsSync } from 'node:fs'
import { processExists } from 'dsh-basics'
import { dirname } from 'node:path'
import type { HumanSessionEntry } from '../human/gateway'
import type { HostInfo } from '../human/protocol'
import { assertPrivateDir, assertRuntimeParentOf, type HostFiles, listHostFiles, runtimeDirPath } from '../human/runtime-dir'
import { AttachError, describeError, HostClient } from './host-client'

/** One running host that answered, with its sessions. */
export interface DiscoveredHost {
  readonly client: HostClient
  readonly host: HostInfo
  readonly sessions: readonly HumanSessionEntry[]
}

/** Every host that answered, and one line per socket that was skipped and why. */
export interface Discovery {
  readonly hosts: DiscoveredHost[]
  readonly skipped: string[]
  /** Pids of every live host in the runtime directory, asked or not. */
  readonly livePids: number[]
}

/**
 * Ask the live hosts in the runtime directory for their sessions: every one, or only the host
 * `onlyPid` (then a stuck host elsewhere costs nothing). The directory must be private to us and its
 * parent safe (else `UNSAFE_RUNTIME_DIR`); a socket of a dead pid is ignored, one of another uid is skipped and said.
 */
export async function discoverHosts(dir: string = runtimeDirPath(), onlyPid?: number): Promise<Discovery> {
  // A parent that hosts refuse is said even before any host could have made a directory in it.
  if (existsSync(dirname(dir))) assertRuntimeParentOf(dir)
  if (!existsSync(dir)) return { hosts: [], skipped: [], livePids: [] }
  assertPrivateDir(dir)
  const live = listHostFiles(dir).filter((files) => processExists(files.pid))
  // All at once: each connection's answer timer runs from its opening, so asking one host after
  // another would let a slow host time out the sockets of the hosts that had already answered.
  const asked = await Promise.all(live.filter((files) => onlyPid === undefined || files.pid === onlyPid).map((files) => askHost(files)))
  const hosts: DiscoveredHost[] = []
  const skipped: string[] = []
  for (const answer of asked) {
    if (typeof answer === 'string') skipped.push(answer)
    else hosts.push(answer)
  }
  return { hosts, skipped, livePids: live.map((files) => files.pid) }
}

/** Connect to one host and list its sessions; never rejects: a failure is the line saying why it was skipped. */
async function askHost(files: HostFiles): Promise<DiscoveredHost | string> {
  let client: HostClient | undefined
  try {
    client = await HostClient.open(files)
    const answer = await client.request({ type: 'list' })
    if (answer.type !== 'sessions') throw new AttachError('BAD_MESSAGE', `host ${files.pid} answered ${answer.type} to list`)
    return { client, host: answer.host, sessions: answer.sessions }
  } catch (error) {
    client?.close()
    return `skipped ${files.socketPath}: ${describeError(error)}`
  }
}

/** Close every connection of a discovery except `keep`. */
export function closeHosts(discovery: Discovery, keep?: HostClient): void {
  for (const { client } of discovery.hosts) if (client !== keep) client.close()
}
