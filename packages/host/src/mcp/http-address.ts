import { isIP } from 'node:net'

/** Where `mcp --http` listens. */
export interface ListenAddress {
  /** An IP literal or a host name, without brackets (`127.0.0.1`, `::1`, `0.0.0.0`, `localhost`). */
  host: string
  /** 0 asks the kernel for a free port; the server prints the one it got. */
  port: number
}

/** The interface `--http <port>` binds when no host is given: loopback only, never the network. */
export const DEFAULT_HTTP_HOST = '127.0.0.1'

/** The MCP endpoint path, as in `http://127.0.0.1:8080/mcp`. */
export const MCP_PATH = '/mcp'

/** Default idle timeout of an HTTP session: long enough for a pause, short enough to reap a dropped client. */
export const DEFAULT_IDLE_TIMEOUT_MS = 30 * 60_000

/**
 * Default idle timeout of an HTTP session that holds no work (no busy terminal, running job or
 * person attached): a one-shot client that never sends DELETE leaves an idle shell this long at most.
 */
export const DEFAULT_QUIET_IDLE_TIMEOUT_MS = 5 * 60_000

/**
 * Parse `--http`: `port`, `host:port` or `[ipv6]:port`. A bare port means loopback, so nothing is
 * reachable from the network unless the user names an interface. Throws a message fit for a usage error.
 */
export function parseListenAddress(text: string): ListenAddress {
  const usage = `--http wants a port, host:port or [ipv6]:port (e.g. 8080, 127.0.0.1:0, 0.0.0.0:8080, [::1]:8080), not "${text}"`
  let host = DEFAULT_HTTP_HOST
  let portText = text
  const bracketed = /^\[([^\]]+)\]:(.*)$/.exec(text)
  if (bracketed) {
    host = bracketed[1]!
    portText = bracketed[2]!
    if (isIP(host) !== 6) throw new Error(usage)
  } else if (text.includes(':')) {
    const colon = text.lastIndexOf(':')
    host = text.slice(0, colon)
    portText = text.slice(colon + 1)
    if (host.includes(':')) throw new Error(`${usage}; write an IPv6 address in brackets: [${host}]:${portText}`)
    if (!/^[A-Za-z0-9.-]+$/.test(host)) throw new Error(usage)
  }
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65_535) throw new Error(usage)
  return { host, port: Number(portText) }
}

/**
 * Parse `--idle-timeout`: a number with an optional unit (`ms`, `s`, `m`, `h`; none = seconds).
 * `0` turns the timeout off. Throws a message fit for a usage error.
 */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim())
  if (!match) throw new Error(`--idle-timeout wants a duration such as 30m, 90s, 1h or 0 (off), not "${text}"`)
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] ?? 's']!
  return Math.round(Number(match[1]) * unit)
}

/** True for an address that only this machine can reach (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase()
  return bare === 'localhost' || bare.endsWith('.localhost') || bare === '::1' || /^127(\.\d{1,3}){3}$/.test(bare) || bare === '::ffff:127.0.0.1'
}

/** An address that binds every interface of its family (`0.0.0.0`, `::`). */
export function isWildcardHost(host: string): boolean {
  return host === '0.0.0.0' || host === '::'
}

/** `host:port` as a URL or a message writes it: an IPv6 host in brackets. */
export function formatHostPort(address: ListenAddress): string {
  return `${isIP(address.host) === 6 ? `[${address.host}]` : address.host}:${address.port}`
}

/** The URL a client on this machine connects to; a wildcard bind is reached through loopback. */
export function endpointUrl(address: ListenAddress): string {
  const host = !isWildcardHost(address.host) ? address.host : address.host === '::' ? '::1' : DEFAULT_HTTP_HOST
  return `http://${formatHostPort({ host, port: address.port })}${MCP_PATH}`
}

/**
 * The command line's `--http`, `--idle-timeout` and `--idle-timeout-quiet`, checked together: all
 * belong to `mcp`, and the timeouts only to `--http`. Throws a message fit for a usage error.
 */
export function parseHttpFlags(
  command: string,
  http: string | undefined,
  idleTimeout: string | undefined,
  quietIdleTimeout?: string | undefined,
): { http?: ListenAddress; idleTimeoutMs?: number; quietIdleTimeoutMs?: number } {
  if (command !== 'mcp') throw new Error(`--http and --idle-timeout belong to mcp, not ${command}`)
  if (http === undefined) throw new Error('--idle-timeout needs --http (a stdio session ends with its client)')
  const flags: { http: ListenAddress; idleTimeoutMs?: number; quietIdleTimeoutMs?: number } = { http: parseListenAddress(http) }
  if (idleTimeout !== undefined) flags.idleTimeoutMs = parseDuration(idleTimeout)
  if (quietIdleTimeout !== undefined) flags.quietIdleTimeoutMs = parseDuration(quietIdleTimeout)
  return flags
}
