import { Resolver } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'
import { networkInterfaces } from 'node:os'
import { allowedByList, type HostPattern, isRequestableHost, normalizeName } from 'dsh-sandbox'
import { errorMessage } from 'dsh-basics'
import { hostsFileAddresses } from './hosts-file'

/*
 * Where the egress proxy may connect: the one rule every request (HTTP or SOCKS) goes through. A
 * host must be a well-formed name or address, on the allowlist by the name the client asked for,
 * and the address it resolves to must not be the host's own (loopback, unspecified, any address of
 * its interfaces) or link-local (cloud metadata): the sandbox has no network, so the proxy must not
 * become its way to the host's local services.
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

/**
 * Why an address is never connected to, or undefined when it may be: a loopback, link-local,
 * multicast or broadcast address, or one of `own` (the host's interfaces, read at each decision).
 */
export function forbiddenAddress(address: string, own: readonly string[] = hostInterfaceAddresses()): string | undefined {
  const family = isIP(address)
  if (family === 0) return `${address} is not an IP address`
  // An IPv4-mapped IPv6 address is judged as the IPv4 address it carries.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  const [checked, type] = mapped ? [mapped[1]!, 'ipv4' as const] : [address, family === 4 ? ('ipv4' as const) : ('ipv6' as const)]
  if (FORBIDDEN_ADDRESSES.check(checked, type)) return `${address} is a loopback, link-local or broadcast address of the host, which the sandbox never reaches`
  const ownList = new BlockList()
  for (const interfaceAddress of own) ownList.addAddress(interfaceAddress, isIP(interfaceAddress) === 4 ? 'ipv4' : 'ipv6')
  if (ownList.check(checked, type)) return `${address} is an address of this host, whose services the sandbox never reaches`
  return undefined
}

/** Every address of the host's own interfaces (a zone index dropped), as the kernel reports them now. */
export function hostInterfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address.replace(/%.*$/, '')))
}

/** Names the proxy resolves to fixed addresses before DNS (config `egressAddresses`). */
export type FixedAddresses = Readonly<Record<string, string>>

/** What the proxy decided for one request: the address to connect to, or why not. */
export type EgressVerdict =
  | { readonly allowed: true; readonly address: string; readonly pattern: HostPattern }
  | { readonly allowed: false; readonly reason: EgressRefusalReason; readonly detail: string }

/** Why a request was refused: a stable code for logs and events. */
export type EgressRefusalReason = 'NOT_ALLOWED' | 'FORBIDDEN_ADDRESS' | 'UNRESOLVED'

/**
 * Decide one request for `host`:`port`: well formed, on the list by name, then resolved (fixed
 * addresses, /etc/hosts, then DNS), then the first address that is not forbidden. The address is
 * decided here, once: the connection goes to it, so a name cannot resolve differently in between.
 */
export async function decideDestination(patterns: readonly HostPattern[], fixed: FixedAddresses, host: string, port: number): Promise<EgressVerdict> {
  if (!isRequestableHost(host)) {
    return { allowed: false, reason: 'NOT_ALLOWED', detail: `${displayTarget(host, port)} is not a host name or an IP address` }
  }
  const pattern = allowedByList(patterns, host, port)
  if (pattern === undefined) {
    return { allowed: false, reason: 'NOT_ALLOWED', detail: `${displayTarget(host, port)} is not on this sandbox's egress allowlist` }
  }
  let addresses: string[]
  try {
    addresses = await resolveHost(fixed, host)
  } catch (error) {
    return { allowed: false, reason: 'UNRESOLVED', detail: `${displayTarget(host, port)} could not be resolved (${printable(errorMessage(error))})` }
  }
  const own = hostInterfaceAddresses()
  const usable = addresses.find((address) => forbiddenAddress(address, own) === undefined)
  if (usable === undefined) {
    return {
      allowed: false,
      reason: 'FORBIDDEN_ADDRESS',
      detail: `${displayTarget(host, port)} resolves only to ${addresses.join(', ')}: ${forbiddenAddress(addresses[0]!, own)}`,
    }
  }
  return { allowed: true, address: usable, pattern }
}

/** How long one DNS question may take, and how often it is asked, before the name counts as unresolved. */
const DNS_TIMEOUT_MS = 3000
const DNS_TRIES = 2

/**
 * The resolver: c-ares, which answers on the event loop. The system's `getaddrinfo` would run on
 * libuv's four pool threads, where a sandbox asking for many slow names would stall the host's file work.
 */
const resolver = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: DNS_TRIES })

/** Every address of `host`: itself when it is an IP literal, a fixed address, /etc/hosts, else DNS (A and AAAA). */
async function resolveHost(fixed: FixedAddresses, host: string): Promise<string[]> {
  const literal = host.replace(/^\[|\]$/g, '')
  if (isIP(literal) !== 0) return [literal]
  const name = normalizeName(host)
  const pinned = Object.entries(fixed).find(([key]) => normalizeName(key) === name)
  if (pinned !== undefined) return [pinned[1]]
  const listed = hostsFileAddresses(name)
  if (listed.length > 0) return [...listed]
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)])
  const addresses = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])]
  if (addresses.length > 0) return addresses
  throw v4.status === 'rejected' ? v4.reason : new Error('no address')
}

/** `host:port` as a person writes it (an IPv6 literal in brackets), with anything unprintable escaped. */
export function displayTarget(host: string, port: number): string {
  const bare = host.replace(/^\[|\]$/g, '')
  return isIP(bare) === 6 ? `[${printable(bare)}]:${port}` : `${printable(host)}:${port}`
}

/** `text` with every character outside printable ASCII written as `\u{…}`: one line, no terminal controls, for logs and events. */
export function printable(text: string): string {
  return text.replace(/[^\x20-\x7e]/gu, (character) => `\\u{${character.codePointAt(0)!.toString(16)}}`)
}
