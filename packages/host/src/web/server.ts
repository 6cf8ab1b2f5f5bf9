import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { errorMessage } from 'dsh-basics'
import type { HumanGateway } from '../human/gateway'
import { secretMatches } from '../mcp/http-auth'
import { isLoopbackHost } from '../mcp/http-address'
import { XtermAssets } from './assets'
import { checkPost, generateWebToken, requestToken } from './auth'
import { readJsonObject, sendBody, sendError, sendJson, sendUnauthorized, WebRequestError } from './http-io'
import { renderPage } from './page'
import { renderPlayerPage } from './player-page'
import { recordingsList, sendRecording } from './recordings'
import { refusalOf } from './refusals'
import { SessionStreams } from './session-streams'

/** Options of {@link startWebView}. */
export interface WebViewOptions {
  /** Port on 127.0.0.1; 0 picks a free one. */
  port: number
  /** Operator log lines (listening, refusals that are the server's fault). */
  log: (line: string) => void
  /** Interface to bind; loopback only (default and recommended: `127.0.0.1`). */
  host?: string
}

/** A running web view: the URL to open (it carries the token) and a way to stop it. */
export interface WebView {
  readonly url: string
  close(): Promise<void>
}

/** Why the web view did not start: `NOT_LOOPBACK` (asked for another interface) or `LISTEN_FAILED`. */
class WebViewError extends Error {
  constructor(
    readonly code: 'NOT_LOOPBACK' | 'LISTEN_FAILED',
    message: string,
  ) {
    super(message)
    this.name = 'WebViewError'
  }
}

/** `/sessions/<id>/<action>` */
const SESSION_ROUTE = /^\/sessions\/([^/]+)\/(events|takeover|release|input)$/

/** The session id in a route, percent-decoded; a malformed escape names no session. */
function sessionIdOf(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    throw new WebRequestError(404, 'NO_SESSION', 'no such session')
  }
}

/**
 * Serve the web view on loopback: a page where the person the agent works for watches every session
 * of this host live and can take one over, and `/player` plays the recordings of its flight recorder
 * (read-only). Every request needs the URL's token; POSTs also need the page's own Origin and JSON.
 * Read-only unless the person presses "Take over".
 */
export async function startWebView(gateway: HumanGateway, options: WebViewOptions): Promise<WebView> {
  const host = options.host ?? '127.0.0.1'
  if (!isLoopbackHost(host)) {
    throw new WebViewError('NOT_LOOPBACK', `the web view listens on loopback only, not ${host}`)
  }
  const token = generateWebToken()
  const assets = new XtermAssets()
  const streams = new SessionStreams(gateway, options.log)
  let origin = ''
  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const refusal = refusalOf(error)
      if (refusal.unexpected) options.log(`web view: ${req.method} ${req.url?.split('?')[0]} failed: ${error instanceof Error ? error.stack : String(error)}`)
      if (refusal.status === 413) res.setHeader('connection', 'close')
      sendError(res, refusal.status, refusal.code, refusal.message)
    })
  })

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', origin)
    if (!secretMatches(requestToken(req, url) ?? '', token)) {
      sendUnauthorized(res)
      return
    }
    const path = url.pathname
    if (req.method === 'GET') {
      if (path === '/') {
        const page = renderPage(token)
        sendBody(res, 'text/html; charset=utf-8', page.html, { 'content-security-policy': page.csp })
        return
      }
      if (assets.has(path)) {
        const asset = await assets.get(path)
        sendBody(res, asset.type, asset.body)
        return
      }
      if (path === '/player') {
        const page = renderPlayerPage(token)
        sendBody(res, 'text/html; charset=utf-8', page.html, { 'content-security-policy': page.csp })
        return
      }
      if (path === '/recordings') {
        sendJson(res, 200, await recordingsList(gateway.recorder()))
        return
      }
      if (path.startsWith('/recordings/')) {
        await sendRecording(res, gateway.recorder(), path.slice('/recordings/'.length))
        return
      }
      if (path === '/sessions') {
        sendJson(res, 200, { sessions: await gateway.sessions() })
        return
      }
      const match = SESSION_ROUTE.exec(path)
      if (match?.[2] === 'events') {
        await streams.open(sessionIdOf(match[1]!), res)
        return
      }
      sendError(res, 404, 'NOT_FOUND', `nothing at ${path}`)
      return
    }
    if (req.method !== 'POST') {
      sendError(res, 405, 'METHOD_NOT_ALLOWED', `${req.method} is not served`)
      return
    }
    const refused = checkPost(req, origin)
    if (refused) {
      sendError(res, refused.status, refused.code, refused.code === 'FOREIGN_ORIGIN' ? 'only the web view page itself may send this' : 'send application/json')
      return
    }
    const match = SESSION_ROUTE.exec(path)
    if (!match || match[2] === 'events') {
      sendError(res, 404, 'NOT_FOUND', `nothing to POST at ${path}`)
      return
    }
    const body = await readJsonObject(req)
    const view = streams.view(sessionIdOf(match[1]!), body.viewId)
    if (match[2] === 'takeover') view.takeWrite()
    else if (match[2] === 'release') view.releaseWrite()
    else {
      if (typeof body.data !== 'string') throw new WebRequestError(400, 'BAD_INPUT', '`data` must be a string')
      if (!view.writing) throw new WebRequestError(403, 'NOT_WRITER', 'this view is read-only: take over first')
      await view.write(body.data)
    }
    sendJson(res, 200, { writing: view.writing })
  }

  await new Promise<void>((resolve, reject) => {
    const refuse = (error: NodeJS.ErrnoException) => {
      const hint = error.code === 'EADDRINUSE' ? '; pick another port, or 0 for a free one' : ''
      reject(new WebViewError('LISTEN_FAILED', `web view cannot listen on ${host}:${options.port}: ${error.code ?? error.message}${hint}`))
    }
    http.once('error', refuse)
    http.listen({ host, port: options.port }, () => {
      http.off('error', refuse)
      resolve()
    })
  })
  // Once listening, an error is the operator's to read, never a reason to crash the host.
  http.on('error', (error: Error) => options.log(`web view: ${errorMessage(error)}`))
  const bound = http.address() as AddressInfo
  const shownHost = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address
  origin = `http://${shownHost}:${bound.port}`
  let closing: Promise<void> | undefined
  return {
    url: `${origin}/?token=${token}`,
    close() {
      closing ??= new Promise<void>((resolve) => {
        streams.closeAll()
        http.close(() => resolve())
        http.closeAllConnections()
      })
      return closing
    },
  }
}
