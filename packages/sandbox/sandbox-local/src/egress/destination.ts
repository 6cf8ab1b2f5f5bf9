import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'
import { allowedByList, type HostPattern, normalizeName } from 'dsh-sandbox'
import { errorMessage } from 'dsh-basics'

/*
 * Where the egress proxy may connect: the one rule every request (HTTP or SOCKS) goes through. A
 * host must be on the allowlist by the name the client asked for, and the address it resolves to
 * must not be one of the host's own (loopback, unspecified) or a link-local one (cloud metadata):
 * the sandbox has no network, so the proxy must not become its way to the host's local services.
 */

/** Addresses never connected to, whatever the list says: the host itself and link-local networks. */
const FORBIDDEN_ADDRESSES = (() => {
  const list = new BlockList()
  list.addSubnet('127.0.0.0', 8, 'ipv4')
  list.addSubnet('0.0.0.0', 8, 'ipv4')
  list.addSubnet('169.254.0.0', 16, 'ipv4')
  list.addSubnet('224.0.0.0', 4, 'ipv4')
  list.addAddress('255.255.255.255', 'ipv4')
  list.addAddress('::1', 'ipv6')
  list.addAddress('::', 'ipv6')
  list.addSubnet('fe80::', 10, 'ipv6')
  list.addSubnet('ff00::', 8, 'ipv6')
  return list
})()

/** Why an address is never connected to, or undefined when it may be. */
export function forbiddenAddress(address: string): string | undefined {
  const family = isIP(address)
  if (family === 0) return `${address} is not an IP address`
  // An IPv4-mapped IPv6 address is judged as the IPv4 address it carries.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  const [checked, type] = mapped ? [mapped[1]!, 'ipv4' as const] : [address, family === 4 ? ('ipv4' as const) : ('ipv6' as const)]
  if (!FORBIDDEN_ADDRESSES.check(checked, type)) return undefined
  return `${address} is a loopback, link-local or broadcast address of the host, which the sandbox never reaches`
}

/** Names the proxy resolves to fixed addresses before asking DNS (config `egressAddresses`). */
export type FixedAddresses = Readonly<Record<string, string>>

/** What the proxy decided for one request: the address to connect to, or why not. */
export type EgressVerdict =
  | { readonly allowed: true; readonly address: string; readonly pattern: HostPattern }
  | { readonly allowed: false; readonly reason: EgressRefusalReason; readonly detail: string }

/** Why a request was refused: a stable code for logs and events. */
export type EgressRefusalReason = 'NOT_ALLOWED' | 'FORBIDDEN_ADDRESS' | 'UNRESOLVED'

/**
 * Decide one request for `host`:`port`: on the list by name, then resolved (fixed addresses first,
 * then the system resolver), then the first address that is not forbidden. The address is decided
 * here, once: the connection goes to it, so a name cannot resolve differently in between.
 */
export async function decideDestination(patterns: readonly HostPattern[], fixed: FixedAddresses, host: string, port: number): Promise<EgressVerdict> {
  const pattern = allowedByList(patterns, host, port)
  if (pattern === undefined) {
    return { allowed: false, reason: 'NOT_ALLOWED', detail: `${displayTarget(host, port)} is not on this sandbox's egress allowlist` }
  }
  let addresses: string[]
  try {
    addresses = await resolveHost(fixed, host)
  } catch (error) {
    return { allowed: false, reason: 'UNRESOLVED', detail: `${displayTarget(host, port)} could not be resolved (${errorMessage(error)})` }
  }
  const usable = addresses.find((address) => forbiddenAddress(address) === undefined)
  if (usable === undefined) {
    return {
      allowed: false,
      reason: 'FORBIDDEN_ADDRESS',
      detail: `${displayTarget(host, port)} resolves only to ${addresses.join(', ')}: ${forbiddenAddress(addresses[0]!)}`,
    }
  }
  return { allowed: true, address: usable, pattern }
}

/** Every address of `host`: itself when it is an IP literal, a fixed address, else the system resolver's. */
async function resolveHost(fixed: FixedAddresses, host: string): Promise<string[]> {
  const literal = host.replace(/^\[|\]$/g, '')
  if (isIP(literal) !== 0) return [literal]
  const name = normalizeName(host)
  const pinned = Object.entries(fixed).find(([key]) => normalizeName(key) === name)
  if (pinned !== undefined) return [pinned[1]]
  const answers = await lookup(name, { all: true, verbatim: true })
  if (answers.length === 0) throw new Error('no address')
  return answers.map((answer) => answer.address)
}

/** `host:port` as a person writes it (an IPv6 literal in brackets). */
export function displayTarget(host: string, port: number): string {
  const bare = host.replace(/^\[|\]$/g, '')
  return isIP(bare) === 6 ? `[${bare}]:${port}` : `${host}:${port}`
}
