import type { Socket } from 'node:net'
import { type EgressVerdict, printable } from './destination'
import { HandshakeError, type HandshakeReader } from './handshake-reader'
import { connectUpstream, relay, UpstreamError, type UpstreamFailure } from './relay'

/*
 * The HTTP side of the egress proxy: `CONNECT host:port` opens a tunnel (HTTPS, anything over
 * TLS), and a request for an absolute `http://` URL is forwarded once, with `Connection: close`
 * (the next request on a connection could name another host). A refusal is a 403 whose reason
 * phrase and body name the host and how to allow it: pip and curl -v print the phrase.
 */

const HEAD_END = Buffer.from('\r\n\r\n')

/** Headers meant for the proxy, or for one hop only: never forwarded to the origin. */
const HOP_HEADERS = new Set(['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive', 'host'])

/** What one decided request needs from the proxy: its verdict, and a report of the refusal. */
export interface HttpRequestContext {
  readonly decide: (host: string, port: number) => Promise<EgressVerdict>
  /** The line a refused client reads: which host, and how to allow it. */
  readonly refusalAdvice: (host: string, port: number, detail: string) => string
}

/** Serve one HTTP proxy request on `client`, whose handshake `reader` holds. */
export async function serveHttp(client: Socket, reader: HandshakeReader, context: HttpRequestContext): Promise<void> {
  let head: string
  try {
    head = (await reader.through(HEAD_END)).toString('latin1')
  } catch (error) {
    if (error instanceof HandshakeError && error.tooLong)
      respond(client, 431, 'Request Header Fields Too Large', 'the request head is too long for the egress proxy')
    else client.destroy()
    return
  }
  const [requestLine = '', ...headerLines] = head.slice(0, -HEAD_END.length).split('\r\n')
  const target = requestTarget(requestLine)
  if (typeof target === 'string') {
    respond(client, 400, 'Bad Request', target)
    return
  }
  const verdict = await context.decide(target.host, target.port)
  if (!verdict.allowed) {
    const advice = context.refusalAdvice(target.host, target.port, verdict.detail)
    respond(client, 403, `Forbidden by the dsh-terminal egress allowlist: ${printable(target.host)}`, advice)
    return
  }
  let upstream: Socket
  try {
    upstream = await connectUpstream(verdict.address, target.port)
  } catch (error) {
    const failure: UpstreamFailure = error instanceof UpstreamError ? error.failure : 'failed'
    const [status, phrase] = failure === 'timeout' ? [504, 'Gateway Timeout'] : [502, 'Bad Gateway']
    respond(client, status, phrase, `the egress proxy could not reach ${target.host}:${target.port}: ${(error as Error).message}`)
    return
  }
  const early = reader.release()
  if (target.kind === 'tunnel') {
    client.write('HTTP/1.1 200 Connection established\r\n\r\n')
    relay(client, upstream, early)
    return
  }
  upstream.write(forwardedHead(requestLine, target, headerLines))
  relay(client, upstream, early)
}

/** Where a request goes: a tunnel for CONNECT, a forwarded request for an absolute http:// URL. */
type RequestTarget =
  | { readonly kind: 'tunnel'; readonly host: string; readonly port: number }
  | { readonly kind: 'forward'; readonly host: string; readonly port: number; readonly path: string; readonly authority: string }

/** The request line's target, or why the proxy cannot serve it (a 400's body). */
function requestTarget(requestLine: string): RequestTarget | string {
  const [method, target, version, extra] = requestLine.split(' ')
  if (
    method === undefined ||
    target === undefined ||
    version === undefined ||
    extra !== undefined ||
    !/^HTTP\/1\.[01]$/.test(version) ||
    !METHOD.test(method)
  ) {
    return 'not an HTTP/1.x request line; this is the sandbox egress proxy (HTTP CONNECT, absolute http:// URLs, or SOCKS5)'
  }
  if (method === 'CONNECT') {
    const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(target)
    const port = match ? Number(match[2]) : 0
    if (!match || port < 1 || port > 65_535) return `CONNECT needs host:port, got ${JSON.stringify(target)}`
    return { kind: 'tunnel', host: match[1]!.replace(/^\[|\]$/g, ''), port }
  }
  let url: URL
  try {
    url = new URL(target)
  } catch {
    return `the egress proxy needs an absolute http:// URL (or CONNECT for https), got ${JSON.stringify(target)}`
  }
  if (url.protocol !== 'http:') return `the egress proxy forwards only http:// URLs; use CONNECT for ${url.protocol.slice(0, -1)}`
  const port = url.port === '' ? 80 : Number(url.port)
  return { kind: 'forward', host: url.hostname.replace(/^\[|\]$/g, ''), port, path: `${url.pathname}${url.search}`, authority: url.host }
}

/**
 * The request head as the origin gets it: origin-form target, the URL's own authority as `Host`
 * (RFC 9112, 3.2.2: a client's Host would front an unlisted name on a shared server), no proxy or
 * hop headers, `Connection: close`.
 */
function forwardedHead(requestLine: string, target: { readonly path: string; readonly authority: string }, headerLines: readonly string[]): string {
  const [method, , version] = requestLine.split(' ')
  const kept = headerLines.filter((line) => !HOP_HEADERS.has(line.slice(0, line.indexOf(':')).trim().toLowerCase()))
  return [`${method} ${target.path} ${version}`, `Host: ${target.authority}`, ...kept, 'Connection: close', '', ''].join('\r\n')
}

/** An HTTP method: a token (RFC 9110, 5.6.2), nothing that could end the line or start another. */
const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** A complete response that ends the connection: the status, a phrase without line breaks, and a one-line body. */
function respond(client: Socket, status: number, phrase: string, body: string): void {
  const text = `${body}\n`
  const safePhrase = phrase.replace(/[\r\n]/g, ' ')
  client.end(
    `HTTP/1.1 ${status} ${safePhrase}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  )
}
