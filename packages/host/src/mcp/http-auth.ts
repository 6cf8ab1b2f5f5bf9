import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { isLoopbackHost } from './http-address'

/** The environment variable a fixed bearer token is read from (terminals never see DSH_* names). */
export const TOKEN_ENV = 'DSH_TERMINAL_TOKEN'

/** Shortest token accepted from {@link TOKEN_ENV}: a guessable token would hand out a shell. */
export const MIN_TOKEN_LENGTH = 16

/** The bearer token of a server and where it came from (the startup message says which). */
export interface BearerToken {
  readonly value: string
  readonly source: 'generated' | 'environment'
}

/** A fresh token: 32 crypto-random bytes, base64url (43 characters, safe in a header and a shell). */
export function generateToken(): string {
  return randomBytes(32).toString('base64url')
}

/**
 * The token to require: {@link TOKEN_ENV} when set (and long enough), else a generated one. The
 * variable is removed from this process's environment, so nothing started later inherits it.
 */
export function resolveToken(env: NodeJS.ProcessEnv = process.env): BearerToken {
  const fixed = env[TOKEN_ENV]
  delete env[TOKEN_ENV]
  if (fixed === undefined || fixed === '') return { value: generateToken(), source: 'generated' }
  if (fixed.length < MIN_TOKEN_LENGTH || /\s/.test(fixed)) {
    throw new Error(`${TOKEN_ENV} must be at least ${MIN_TOKEN_LENGTH} characters without spaces (it has ${fixed.length}); unset it to get a generated token`)
  }
  return { value: fixed, source: 'environment' }
}

/** Why a request was not admitted; `undefined` from {@link checkBearer} means it was. */
export type AuthFailure = 'missing' | 'invalid'

/**
 * Whether `given` equals the secret `expected`, compared in constant time: both sides are hashed
 * first, so neither the comparison nor a length difference tells a guesser how much of a guess was
 * right. An empty `given` never matches.
 */
export function secretMatches(given: string, expected: string): boolean {
  if (given === '') return false
  const a = createHash('sha256').update(given).digest()
  const b = createHash('sha256').update(expected).digest()
  return timingSafeEqual(a, b)
}

/**
 * The token of an `Authorization: Bearer <token>` header value: `undefined` when there is no header,
 * `''` when it is not of that form (so it matches no secret).
 */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)
  return match ? match[1]! : ''
}

/** Check `Authorization: Bearer <token>` against `token` with {@link secretMatches}. */
export function checkBearer(headers: IncomingHttpHeaders, token: string): AuthFailure | undefined {
  const given = bearerToken(headers.authorization)
  if (given === undefined) return 'missing'
  return secretMatches(given, token) ? undefined : 'invalid'
}

/**
 * DNS-rebinding protection: a browser page always sends `Origin`, so only a loopback origin (or none,
 * as from a native client) may talk to the server. `null` and unparsable origins are refused.
 */
export function originAllowed(origin: string | undefined): boolean {
  if (origin === undefined) return true
  try {
    const url = new URL(origin)
    return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackHost(url.hostname)
  } catch {
    return false
  }
}
