import { randomBytes } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { bearerToken } from '../mcp/http-auth'

/**
 * A fresh web-view token: 32 crypto-random bytes as 64 hex digits (safe in a URL and in HTML). Not
 * `generateToken` of the MCP server: the page embeds the token only after checking it is hex.
 */
export function generateWebToken(): string {
  return randomBytes(32).toString('hex')
}

/** The token a request carries: `Authorization: Bearer …` (POSTs from the page) or `?token=`. */
export function requestToken(req: IncomingMessage, url: URL): string | undefined {
  return bearerToken(req.headers.authorization) ?? url.searchParams.get('token') ?? undefined
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
