import { readFileSync, statSync } from 'node:fs'
import { isIP } from 'node:net'
import { normalizeName } from 'dsh-sandbox'

/** The system's static host table, which the system resolver reads before DNS (and c-ares does not). */
const HOSTS_FILE = '/etc/hosts'

/** The table as last read, and the file's mtime then: read again only when the file changed. */
let cached: { readonly mtimeMs: number; readonly table: ReadonlyMap<string, readonly string[]> } | undefined

/** The addresses `/etc/hosts` gives `name` (lower case, no trailing dot), in file order; none when it is not there. */
export function hostsFileAddresses(name: string, path = HOSTS_FILE): readonly string[] {
  let mtimeMs: number
  try {
    mtimeMs = statSync(path).mtimeMs
  } catch {
    return []
  }
  if (path !== HOSTS_FILE) return parseHostsFile(readFileSync(path, 'utf8')).get(name) ?? []
  if (cached?.mtimeMs !== mtimeMs) cached = { mtimeMs, table: parseHostsFile(readFileSync(path, 'utf8')) }
  return cached.table.get(name) ?? []
}

/** `address name alias…` lines, `#` comments dropped, into name → addresses. */
export function parseHostsFile(text: string): Map<string, string[]> {
  const table = new Map<string, string[]>()
  for (const line of text.split('\n')) {
    const [address, ...names] = line.replace(/#.*$/, '').trim().split(/\s+/)
    if (address === undefined || isIP(address) === 0) continue
    for (const name of names) {
      const key = normalizeName(name)
      const addresses = table.get(key) ?? []
      if (!addresses.includes(address)) addresses.push(address)
      table.set(key, addresses)
    }
  }
  return table
}
