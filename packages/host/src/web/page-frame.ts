import { randomBytes } from 'node:crypto'

/** A page as served: its HTML and the Content-Security-Policy that lets only its own script run. */
export interface RenderedPage {
  readonly html: string
  readonly csp: string
}

/** What one page of the web view puts into the frame every page shares. */
export interface PageParts {
  /** The document title. */
  readonly title: string
  /** Its style sheet (inline: the CSP allows inline styles, never inline scripts without the nonce). */
  readonly style: string
  /** The markup inside `<body>`, before the scripts. */
  readonly body: string
  /** Its own script, run with this render's nonce after xterm.js and its Unicode 11 addon loaded. */
  readonly script: string
}

/**
 * One page of the web view (the live sessions or the recording player): xterm.js from the host's own
 * assets behind the token (64 hex digits, so written into URLs unescaped), a fresh nonce per render,
 * and a CSP under which nothing but the page's own script and the host's assets may run or load.
 */
export function renderFramedPage(token: string, parts: PageParts): RenderedPage {
  if (!/^[0-9a-f]+$/.test(token)) throw new Error('the web view token must be hex')
  const nonce = randomBytes(16).toString('base64')
  const csp = [
    "default-src 'none'",
    `script-src 'self' 'nonce-${nonce}'`,
    "style-src 'self' 'unsafe-inline'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ')
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${parts.title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/xterm.css?token=${token}">
<style>${parts.style}</style>
</head>
<body>
${parts.body}
<script src="/assets/xterm.js?token=${token}"></script>
<script src="/assets/addon-unicode11.js?token=${token}"></script>
<script nonce="${nonce}">${parts.script}</script>
</body>
</html>
`
  return { html, csp }
}
