import { type RenderedPage, renderFramedPage } from './page-frame'
import { PAGE_SCRIPT } from './page-script'

const STYLE = `
  body { margin: 0; font: 14px/1.4 system-ui, sans-serif; background: #f4f4f4; color: #222; display: flex; height: 100vh; }
  #sidebar { width: clamp(14rem, 18vw, 20rem); flex: none; overflow: auto; border-right: 1px solid #ccc; background: #fff; }
  #sidebar h1 { font-size: 1rem; margin: 0; padding: .75rem; border-bottom: 1px solid #ddd; }
  #sidebar h1 a { font-size: 12px; font-weight: normal; margin-left: .5rem; }
  #sessions { list-style: none; margin: 0; padding: 0; }
  #sessions li { padding: .5rem .75rem; border-bottom: 1px solid #eee; cursor: pointer; overflow-wrap: anywhere; }
  #sessions li.selected { background: #e3ecfa; }
  #sessions .meta { color: #666; font-size: 12px; }
  #empty { padding: .75rem; color: #666; }
  #main { flex: 1; display: flex; flex-direction: column; min-width: 0; }
  #bar { display: flex; gap: .75rem; align-items: center; padding: .5rem .75rem; border-bottom: 1px solid #ccc; background: #fff; }
  #title { font-weight: 600; white-space: nowrap; }
  #status { color: #666; flex: 1; min-width: 0; overflow-wrap: anywhere; }
  #status.error { color: #b00020; }
  #terminal { flex: 1; min-height: 0; padding: .5rem; overflow: auto; }
  #placeholder { margin: 2rem auto; max-width: 32rem; padding: 0 1rem; color: #555; font-size: 15px; text-align: center; }
  button { font: inherit; padding: .25rem .75rem; }
`

/**
 * The one HTML page of the web view. The token is written into the asset URLs (it is 64 hex
 * digits, so it needs no escaping); the script reads it from the page's own URL for API calls.
 */
export function renderPage(token: string): RenderedPage {
  return renderFramedPage(token, {
    title: 'dsh-terminal sessions',
    style: STYLE,
    script: PAGE_SCRIPT,
    body: `<nav id="sidebar">
  <h1>dsh-terminal sessions <a id="player-link" href="/player?token=${token}">recordings</a></h1>
  <ul id="sessions"></ul>
  <div id="empty">No sessions yet. They appear here as the agent opens them.</div>
</nav>
<main id="main">
  <div id="bar">
    <span id="title">Pick a session</span>
    <span id="status"></span>
    <button id="takeover" type="button" disabled>Take over</button>
  </div>
  <p id="placeholder">Loading the sessions…</p>
  <div id="terminal" hidden></div>
</main>`,
  })
}
