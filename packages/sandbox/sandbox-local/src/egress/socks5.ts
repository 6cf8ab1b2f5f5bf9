import type { Socket } from 'node:net'
import type { EgressVerdict } from './destination'
import type { HandshakeReader } from './handshake-reader'
import { connectUpstream, relay, UpstreamError, type UpstreamFailure } from './relay'

/*
 * The SOCKS5 side of the egress proxy (RFC 1928), for what speaks SOCKS rather than HTTP: `curl
 * --proxy socks5h://`, ALL_PROXY, and ssh through the connect helper. No authentication (the
 * socket is reachable only from the sandboxes it serves), CONNECT only, names resolved here
 * (`socks5h`), so the allowlist sees the name the client asked for.
 */

/** The protocol version byte that starts every SOCKS5 frame; the proxy tells SOCKS from HTTP by it. */
export const SOCKS5_VERSION = 0x05

const NO_AUTHENTICATION = 0x00
const NO_ACCEPTABLE_METHOD = 0xff
const COMMAND_CONNECT = 0x01

/** Reply codes (RFC 1928, section 6). */
const REPLY = {
  succeeded: 0x00,
  generalFailure: 0x01,
  notAllowed: 0x02,
  hostUnreachable: 0x04,
  connectionRefused: 0x05,
  ttlExpired: 0x06,
  commandNotSupported: 0x07,
  addressTypeNotSupported: 0x08,
} as const

const UPSTREAM_REPLIES: Readonly<Record<UpstreamFailure, number>> = {
  refused: REPLY.connectionRefused,
  unreachable: REPLY.hostUnreachable,
  timeout: REPLY.ttlExpired,
  failed: REPLY.generalFailure,
}

/** Serve one SOCKS5 connection on `client`, whose handshake `reader` holds. */
export async function serveSocks5(client: Socket, reader: HandshakeReader, decide: (host: string, port: number) => Promise<EgressVerdict>): Promise<void> {
  const [, methodCount = 0] = await reader.bytes(2)
  const methods = await reader.bytes(methodCount)
  if (!methods.includes(NO_AUTHENTICATION)) {
    client.end(Buffer.from([SOCKS5_VERSION, NO_ACCEPTABLE_METHOD]))
    return
  }
  client.write(Buffer.from([SOCKS5_VERSION, NO_AUTHENTICATION]))
  const [version, command, , addressType] = await reader.bytes(4)
  if (version !== SOCKS5_VERSION) {
    client.destroy()
    return
  }
  const host = await readAddress(reader, addressType)
  const port = (await reader.bytes(2)).readUInt16BE(0)
  if (host === undefined) return reply(client, REPLY.addressTypeNotSupported)
  if (command !== COMMAND_CONNECT) return reply(client, REPLY.commandNotSupported)
  const verdict = await decide(host, port)
  if (!verdict.allowed) return reply(client, REPLY.notAllowed)
  let upstream: Socket
  try {
    upstream = await connectUpstream(verdict.address, port)
  } catch (error) {
    return reply(client, error instanceof UpstreamError ? UPSTREAM_REPLIES[error.failure] : REPLY.generalFailure)
  }
  client.write(replyFrame(REPLY.succeeded))
  relay(client, upstream, reader.release())
}

/** The destination host of a request: a dotted IPv4, a name, or an IPv6 address; undefined for an unknown type. */
async function readAddress(reader: HandshakeReader, addressType: number | undefined): Promise<string | undefined> {
  if (addressType === 0x01) return [...(await reader.bytes(4))].join('.')
  if (addressType === 0x03) {
    const [length = 0] = await reader.bytes(1)
    return (await reader.bytes(length)).toString('latin1')
  }
  if (addressType === 0x04) {
    const bytes = await reader.bytes(16)
    const groups: string[] = []
    for (let index = 0; index < 16; index += 2) groups.push(bytes.readUInt16BE(index).toString(16))
    return groups.join(':')
  }
  return undefined
}

/** A reply with an unspecified bound address (0.0.0.0:0): clients of CONNECT do not use it. */
function replyFrame(code: number): Buffer {
  return Buffer.from([SOCKS5_VERSION, code, 0x00, 0x01, 0, 0, 0, 0, 0, 0])
}

function reply(client: Socket, code: number): void {
  client.end(replyFrame(code))
}
