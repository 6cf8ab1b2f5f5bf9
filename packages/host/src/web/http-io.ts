import type { IncomingMessage, ServerResponse } from 'node:http'

/** Largest POST body read; a bigger one gets 413 (every request the page sends is tiny). */
export const MAX_BODY_BYTES = 64 * 1024

/** A request the web view refuses, with the HTTP status and a stable code for the page. */
export class WebRequestError extends Error {
  constructor(
    /** HTTP status to answer with. */
    readonly status: number,
    /** Stable code the page routes on (`BODY_TOO_LARGE`, `BAD_JSON`, `NO_VIEW`, …). */
    readonly code: string,
    message: string,
  ) {
    super(message)
    this.name = 'WebRequestError'
  }
}

/** Headers every answer carries: never cached, never framed, never sniffed, no referrer leaks the token. */
const BASE_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
} as const

/** Answer with `body` as JSON. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  res.writeHead(status, { ...BASE_HEADERS, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

/** Answer with a refusal the page can show: `{code, message}`. */
export function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  if (res.headersSent) {
    res.destroy()
    return
  }
  sendJson(res, status, { code, message })
}

/** 401 with nothing that tells a guesser why. */
export function sendUnauthorized(res: ServerResponse): void {
  res.writeHead(401, { ...BASE_HEADERS, 'content-type': 'text/plain; charset=utf-8', 'content-length': 12 })
  res.end('unauthorized')
}

/** Answer with a fixed body (the page, a script, a stylesheet). */
export function sendBody(res: ServerResponse, type: string, body: string | Buffer, extra: Record<string, string> = {}): void {
  res.writeHead(200, { ...BASE_HEADERS, ...extra, 'content-type': type, 'content-length': Buffer.byteLength(body) })
  res.end(body)
}

/** Read a JSON object body of at most {@link MAX_BODY_BYTES}; refuses a bigger one before reading it when its length is declared. */
export async function readJsonObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  const declared = Number(req.headers['content-length'] ?? 0)
  if (declared > MAX_BODY_BYTES) throw new WebRequestError(413, 'BODY_TOO_LARGE', `request body over ${MAX_BODY_BYTES} bytes`)
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > MAX_BODY_BYTES) throw new WebRequestError(413, 'BODY_TOO_LARGE', `request body over ${MAX_BODY_BYTES} bytes`)
    chunks.push(chunk)
  }
  let value: unknown
  try {
    value = JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch {
    throw new WebRequestError(400, 'BAD_JSON', 'the body is not valid JSON')
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new WebRequestError(400, 'BAD_JSON', 'the body must be a JSON object')
  return value as Record<string, unknown>
}
