import { isIP } from 'node:net'

/*
 * The egress allowlist's grammar and its one matching rule, shared by every provider: a pattern is
 * a host name (`github.com`), a wildcard over its subdomains (`*.npmjs.org`), or an IP address,
 * each optionally with `:port` (`github.com:22`, `[2001:db8::1]:443`). Names compare without case
 * and without a trailing dot. A wildcard matches subdomains at any depth, never the bare domain:
 * list both to allow both.
 */

/** One parsed allowlist entry. */
export interface HostPattern {
  /** Lower-case name without a trailing dot (without `*.` for a wildcard), or an IP address as written. */
  readonly host: string
  /** True for `*.host`: any name ending in `.host`. */
  readonly wildcard: boolean
  /** The only port allowed, or undefined for any port. */
  readonly port?: number
  /** The entry as the user wrote it, for messages. */
  readonly text: string
}

/** A DNS label: letters, digits, hyphens and (as many tools allow) underscores, not starting or ending with a hyphen. */
const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/

/** Why `text` is not an allowlist entry, or undefined when it is one. */
export function hostPatternProblem(text: string): string | undefined {
  const parsed = parsePattern(text)
  return typeof parsed === 'string' ? parsed : undefined
}

/** Parse an allowlist entry; throws a `TypeError` naming what is wrong (callers wrap it in their own error code). */
export function parseHostPattern(text: string): HostPattern {
  const parsed = parsePattern(text)
  if (typeof parsed === 'string') throw new TypeError(parsed)
  return parsed
}

function parsePattern(text: unknown): HostPattern | string {
  if (typeof text !== 'string' || text.trim() === '') return 'an allowed host must be a non-empty string such as "github.com" or "*.npmjs.org"'
  if (/[/\s@?#]/.test(text.trim())) {
    return `allowed host ${JSON.stringify(text)} is not a host name: write the host alone (github.com, *.npmjs.org, github.com:22), without scheme, user or path`
  }
  const { host, port } = splitPort(text.trim())
  if (port !== undefined && (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65_535)) {
    return `allowed host ${JSON.stringify(text)} has an invalid port; write host:1-65535`
  }
  const portField = port === undefined ? {} : { port: Number(port) }
  if (isIP(host) !== 0) return { host: normalizeAddress(host), wildcard: false, ...portField, text }
  const wildcard = host.startsWith('*.')
  const name = normalizeName(wildcard ? host.slice(2) : host)
  const labels = name.split('.')
  if (name.length > 253 || !labels.every((label) => LABEL.test(label))) {
    return `allowed host ${JSON.stringify(text)} is not a host name, a "*.domain" wildcard or an IP address`
  }
  if (wildcard && labels.length < 2) return `allowed host ${JSON.stringify(text)} would match a whole top-level domain; name a domain such as "*.example.com"`
  return { host: name, wildcard, ...portField, text }
}

/** `host:port`, `[v6]:port`, a bare v6 address or a bare name. */
function splitPort(text: string): { host: string; port?: string } {
  if (text.startsWith('[')) {
    const end = text.indexOf(']')
    if (end < 0) return { host: text }
    const rest = text.slice(end + 1)
    return rest.startsWith(':') ? { host: text.slice(1, end), port: rest.slice(1) } : { host: text.slice(1, end) }
  }
  const colon = text.lastIndexOf(':')
  // More than one colon without brackets is an IPv6 address with no port.
  if (colon < 0 || text.indexOf(':') !== colon) return { host: text }
  return { host: text.slice(0, colon), port: text.slice(colon + 1) }
}

/** A host name as compared: lower case, no trailing dot. */
export function normalizeName(name: string): string {
  const lower = name.toLowerCase()
  return lower.endsWith('.') ? lower.slice(0, -1) : lower
}

/** An address as compared: IPv6 in its shortest form (as the URL parser writes it), without brackets. */
function normalizeAddress(address: string): string {
  if (isIP(address) !== 6) return address
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1)
  } catch {
    // A zone index (`fe80::1%lo`) is no URL host: compared as written, it matches no entry.
    return address.toLowerCase()
  }
}

/**
 * Whether `text` is something a client may ask a proxy for: a host name of DNS labels (at most 253
 * characters, a trailing dot allowed) or an IP literal without a zone index. Anything else (a NUL, a
 * line break, spaces) is refused before it is matched or resolved: a resolver may read less of it
 * than the match did.
 */
export function isRequestableHost(text: string): boolean {
  const bare = text.replace(/^\[|\]$/g, '')
  if (isIP(bare) !== 0) return !bare.includes('%')
  const name = text.endsWith('.') ? text.slice(0, -1) : text
  return (
    name.length > 0 &&
    name.length <= 253 &&
    name
      .toLowerCase()
      .split('.')
      .every((label) => LABEL.test(label))
  )
}

/**
 * The matching rule: whether a connection to `host` (a name or an IP literal, as the client asked
 * for it) on `port` is on the list. An IP literal matches only an IP entry; a name matches an equal
 * name, or a wildcard it is a subdomain of.
 */
export function allowedByList(patterns: readonly HostPattern[], host: string, port: number): HostPattern | undefined {
  const target = isIP(host.replace(/^\[|\]$/g, '')) !== 0 ? normalizeAddress(host.replace(/^\[|\]$/g, '')) : normalizeName(host)
  return patterns.find((pattern) => {
    if (pattern.port !== undefined && pattern.port !== port) return false
    if (!pattern.wildcard) return pattern.host === target
    return target.endsWith(`.${pattern.host}`)
  })
}
