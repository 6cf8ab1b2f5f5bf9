import { connect, type Socket } from 'node:net'

/** How long the proxy waits for an allowed host to accept a connection. */
export const UPSTREAM_CONNECT_TIMEOUT_MS = 10_000

/** Why a connection to an allowed host failed, as both protocols report it. */
export type UpstreamFailure = 'refused' | 'unreachable' | 'timeout' | 'failed'

/** A connection to an allowed host that could not be made. */
export class UpstreamError extends Error {
  constructor(
    readonly failure: UpstreamFailure,
    message: string,
  ) {
    super(message)
    this.name = 'UpstreamError'
  }
}

/** Connect to `address`:`port` (an address decided by `decideDestination`, never a name). */
export function connectUpstream(address: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: address, port, allowHalfOpen: true })
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new UpstreamError('timeout', `no answer from ${address}:${port} within ${UPSTREAM_CONNECT_TIMEOUT_MS / 1000} s`))
    }, UPSTREAM_CONNECT_TIMEOUT_MS)
    socket.once('connect', () => {
      clearTimeout(timer)
      socket.off('error', onError)
      resolve(socket)
    })
    const onError = (error: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      reject(new UpstreamError(failureOf(error.code), `${address}:${port}: ${error.message}`))
    }
    socket.once('error', onError)
  })
}

function failureOf(code: string | undefined): UpstreamFailure {
  if (code === 'ECONNREFUSED') return 'refused'
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'unreachable'
  if (code === 'ETIMEDOUT') return 'timeout'
  return 'failed'
}

/**
 * Relay both ways until both sides are done: `early` (what the client sent after its handshake)
 * first. An end on one side half-closes the other; an error on either destroys both.
 */
export function relay(client: Socket, upstream: Socket, early: Buffer): void {
  const teardown = () => {
    client.destroy()
    upstream.destroy()
  }
  client.on('error', teardown)
  upstream.on('error', teardown)
  client.on('close', () => upstream.destroy())
  upstream.on('close', () => client.destroy())
  if (early.length > 0) upstream.write(early)
  client.pipe(upstream)
  upstream.pipe(client)
  client.resume()
}
