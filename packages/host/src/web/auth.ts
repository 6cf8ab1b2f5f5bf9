import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

/** A fresh web-view token: 32 crypto-random bytes as 64 hex digits (safe in a URL and in HTML). */
export function generateWebToken(): string {
  return randomBytes(32).toString('hex')
}

/**
 * Whether `given` is the token, compared in constant time: both sides are hashed first, so neither
 * the comparison nor a length difference tells a guesser how much of a guess was right.
 */
export function tokenMatches(given: string | undefined, token: string): boolean {
  if (given === undefined || given === '') return false
  const a = createHash('sha256').update(given).digest()
  const b = createHash('sha256').update(token).digest()
  return timingSafeEqual(a, b)
}

/** The token a request carries: `Authorization: Bearer …` (POSTs from the page) or `?token=`. */
export function requestToken(req: IncomingMessage, url: URL): string | undefined {
  const header = req.headers.authorization
  if (header) {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)
    return match ? match[1] : ''
  }
  return url.searchParams.get('token') ?? undefined
}

/** Why a state-changing request is refused before it is read; `undefined` when it may proceed. */
export type PostRefusal = { status: 403; code: 'FOREIGN_ORIGIN' } | { status: 415; code: 'NOT_JSON' }

/**
 * A POST must come from the page itself (its `Origin` is exactly the server's own) and say JSON:
 * another site's page cannot send it, and a plain form (no preflight) cannot either.
 */
export function checkPost(req: IncomingMessage, ownOrigin: string): PostRefusal | undefined {
  if (req.headers.origin !== ownOrigin) return { status: 403, code: 'FOREIGN_ORIGIN' }
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()
  if (type !== 'application/json') return { status: 415, code: 'NOT_JSON' }
  return undefined
}
