import { type RenderedPage, renderFramedPage } from './page-frame'
import { PLAYER_SCRIPT } from './player-script'

const STYLE = `
  body { margin: 0; font: 14px/1.4 system-ui, sans-serif; background: #f4f4f4; color: #222; display: flex; height: 100vh; }
  #sidebar { width: clamp(14rem, 20vw, 24rem); flex: none; overflow: auto; border-right: 1px solid #ccc; background: #fff; }
  #sidebar h1 { font-size: 1rem; margin: 0; padding: .75rem; border-bottom: 1px solid #ddd; }
  #sidebar h1 a { font-size: 12px; font-weight: normal; margin-left: .5rem; }
  #recordings { list-style: none; margin: 0; padding: 0; }
  #recordings li { padding: .5rem .75rem; border-bottom: 1px solid #eee; cursor: pointer; overflow-wrap: anywhere; font-size: 12px; }
  #recordings li.selected { background: #e3ecfa; }
  #empty { padding: .75rem; color: #666; }
  #main { flex: 1; display: flex; flex-direction: column; min-width: 0; }
  #bar { display: flex; gap: .75rem; align-items: center; padding: .5rem .75rem; border-bottom: 1px solid #ccc; background: #fff; }
  #title { font-weight: 600; white-space: nowrap; }
  #status { color: #666; flex: 1; min-width: 0; overflow-wrap: anywhere; }
  #status.error { color: #b00020; }
  #clock { font-variant-numeric: tabular-nums; color: #444; }
  #timeline { position: relative; height: 2.2rem; margin: .5rem 1.25rem; border-bottom: 3px solid #ccc; }
  #progress { position: absolute; left: 0; bottom: -3px; height: 3px; background: #3367d6; width: 0; }
  .mark { position: absolute; bottom: .2rem; transform: translateX(-50%); min-width: 1.6rem; padding: 0 .3rem; font-size: 12px; border: 1px solid #3367d6; border-radius: .8rem; background: #fff; color: #3367d6; cursor: pointer; }
  .mark.passed { background: #3367d6; color: #fff; }
  #terminal { flex: 1; min-height: 0; padding: .5rem; overflow: auto; }
  button, select { font: inherit; padding: .25rem .75rem; }
`

/**
 * The recording player: the recordings of this host's recorder on the left, the chosen one in
 * xterm.js with play, speed and a timeline of its sends. Served behind the web view's token, like
 * every page; it reads recordings and nothing else.
 */
export function renderPlayerPage(token: string): RenderedPage {
  return renderFramedPage(token, {
    title: 'dsh-terminal recordings',
    style: STYLE,
    script: PLAYER_SCRIPT,
    body: `<nav id="sidebar">
  <h1>Recordings <a href="/?token=${token}">live sessions</a></h1>
  <ul id="recordings"></ul>
  <div id="empty">No recordings yet.</div>
</nav>
<main id="main">
  <div id="bar">
    <span id="title">Pick a recording</span>
    <button id="play" type="button" disabled>Play</button>
    <select id="speed" aria-label="speed">
      <option value="0.5">0.5×</option><option value="1" selected>1×</option><option value="2">2×</option><option value="4">4×</option><option value="8">8×</option>
    </select>
    <span id="clock"></span>
    <span id="status"></span>
  </div>
  <div id="timeline" aria-label="sends"><div id="progress"></div></div>
  <div id="terminal"></div>
</main>`,
  })
}
