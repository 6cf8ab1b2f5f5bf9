import { existsSync } from 'node:fs'
import type { HumanSessionEntry } from '../human/gateway'
import type { HostInfo } from '../human/protocol'
import { assertPrivateDir, isProcessAlive, listHostFiles, runtimeDirPath } from '../human/runtime-dir'
import { AttachError, HostClient } from './host-client'

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
}

/**
 * Ask every live host in the runtime directory for its sessions. The directory must be private to us
 * (else `UNSAFE_RUNTIME_DIR`); a socket of a dead pid is ignored, one of another uid is skipped and said.
 */
export async function discoverHosts(dir: string = runtimeDirPath()): Promise<Discovery> {
  if (!existsSync(dir)) return { hosts: [], skipped: [] }
  assertPrivateDir(dir)
  const hosts: DiscoveredHost[] = []
  const skipped: string[] = []
  for (const files of listHostFiles(dir)) {
    if (!isProcessAlive(files.pid)) continue
    let client: HostClient | undefined
    try {
      client = await HostClient.open(files)
      const answer = await client.request({ type: 'list' })
      if (answer.type !== 'sessions') throw new AttachError('BAD_MESSAGE', `host ${files.pid} answered ${answer.type} to list`)
      hosts.push({ client, host: answer.host, sessions: answer.sessions })
    } catch (error) {
      client?.close()
      const code = (error as { code?: string }).code
      skipped.push(`skipped ${files.socketPath}: ${(error as Error).message}${code ? ` (${code})` : ''}`)
    }
  }
  return { hosts, skipped }
}

/** Close every connection of a discovery except `keep`. */
export function closeHosts(discovery: Discovery, keep?: HostClient): void {
  for (const { client } of discovery.hosts) if (client !== keep) client.close()
}
