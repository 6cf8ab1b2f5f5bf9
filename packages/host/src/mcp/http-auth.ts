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
 * Check `Authorization: Bearer <token>` in constant time: both sides are hashed first, so neither
 * the comparison nor the length check tells an attacker how much of a guess was right.
 */
export function checkBearer(headers: IncomingHttpHeaders, token: string): AuthFailure | undefined {
  const header = headers.authorization
  if (!header) return 'missing'
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)
  if (!match) return 'invalid'
  const given = createHash('sha256').update(match[1]!).digest()
  const wanted = createHash('sha256').update(token).digest()
  return timingSafeEqual(given, wanted) ? undefined : 'invalid'
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
