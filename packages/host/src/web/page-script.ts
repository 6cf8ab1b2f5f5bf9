/**
 * The page's own script (plain browser JavaScript, no framework), inlined into the page. It lists
 * sessions every 2 s, streams the selected one into xterm.js, and types only while this view writes.
 */
export const PAGE_SCRIPT = `
'use strict';
const token = new URLSearchParams(location.search).get('token') || '';
const listEl = document.getElementById('sessions');
const emptyEl = document.getElementById('empty');
const titleEl = document.getElementById('title');
const statusEl = document.getElementById('status');
const button = document.getElementById('takeover');
const holder = document.getElementById('terminal');
const placeholderEl = document.getElementById('placeholder');
/** The font size the terminal starts from, and the smallest one fitting a wide session may shrink it to. */
const FONT_SIZE = 15;
const MIN_FONT_SIZE = 6;
const terminal = new Terminal({ rows: 24, cols: 80, scrollback: 2000, convertEol: false, fontSize: FONT_SIZE, allowProposedApi: true });
// The session's emulator counts columns with Unicode 11 (emoji take two): the page draws with the same widths.
terminal.loadAddon(new Unicode11Addon.Unicode11Addon());
terminal.unicode.activeVersion = '11';
/** The terminal is opened when the first session is picked: until then the placeholder says what to do. */
let terminalOpen = false;

/** The stream on screen: { sessionId, source, viewId, writing, ended } or null. */
let current = null;
/** Keystrokes not yet sent, and whether a POST is in flight (keys go out in order, one POST at a time). */
let pendingKeys = '';
let sending = false;

function showStatus(text, isError) {
  statusEl.textContent = text;
  statusEl.className = isError ? 'error' : '';
}

async function post(sessionId, action, body) {
  const response = await fetch('/sessions/' + encodeURIComponent(sessionId) + '/' + action, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer ' + token },
    body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({ code: 'HTTP_' + response.status, message: response.statusText }));
  if (!response.ok) throw Object.assign(new Error(answer.message || 'refused'), { code: answer.code });
  return answer;
}

function describeInput(input) {
  if (!input) return '';
  const program = input.program && input.program.name ? ' (' + input.program.name + ')' : '';
  return input.kind + program;
}

// Who is there, in the same words a refused "Take over" uses: "took over" holds the keyboard, "typing" typed lately.
function describePeople(entry) {
  const people = entry.people;
  if (!people) return entry.human ? 'person ' + entry.human : '';
  const others = people.writer ? people.attached - 1 : people.attached;
  const watching = others === 1 ? '1 person watching' : others + ' people watching';
  if (!people.writer) return watching;
  const writer = people.writer.typing ? '1 person typing' : '1 person took over (not typing now)';
  return others > 0 ? writer + ', ' + others + ' watching' : writer;
}

// Before a session is picked the terminal area says what to do, never an empty black box.
function renderPlaceholder(count) {
  if (!placeholderEl || placeholderEl.hidden) return;
  placeholderEl.textContent = count > 0
    ? 'Pick a session on the left to watch it here. It opens read-only; press "Take over" to type into it.'
    : 'No sessions yet. When an agent of this host opens a terminal (terminal_open), it appears on the left; pick it to watch it here.';
}

// The whole session width fits beside the list: a wide session gets a smaller font, never a horizontal scrollbar.
function fitWidth() {
  if (!terminalOpen) return;
  const style = getComputedStyle(holder);
  const room = holder.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const screen = holder.querySelector('.xterm-screen');
  if (!screen || room <= 0) return;
  let size = FONT_SIZE;
  terminal.options.fontSize = size;
  const width = screen.getBoundingClientRect().width;
  if (width <= room) return;
  size = Math.max(MIN_FONT_SIZE, Math.floor((size * room) / width));
  terminal.options.fontSize = size;
  while (size > MIN_FONT_SIZE && screen.getBoundingClientRect().width > room) terminal.options.fontSize = --size;
}

window.addEventListener('resize', fitWidth);

function renderList(sessions) {
  listEl.replaceChildren();
  emptyEl.hidden = sessions.length > 0;
  renderPlaceholder(sessions.length);
  for (const entry of sessions) {
    const item = document.createElement('li');
    item.dataset.sessionId = entry.sessionId;
    if (current && current.sessionId === entry.sessionId) item.className = 'selected';
    const name = document.createElement('div');
    name.textContent = entry.sessionId + (entry.name ? ' · ' + entry.name : '');
    const meta = document.createElement('div');
    meta.className = 'meta';
    const parts = ['agent ' + entry.ownerId, entry.status && entry.status.kind ? entry.status.kind : String(entry.status)];
    const input = describeInput(entry.input);
    if (input) parts.push('waits: ' + input);
    const people = describePeople(entry);
    if (people) parts.push(people);
    meta.textContent = parts.join(' · ');
    item.append(name, meta);
    item.addEventListener('click', () => select(entry.sessionId));
    listEl.append(item);
  }
}

let listings = 0;

// Only the latest listing asked for is drawn: a slow older answer never replaces a newer one.
async function refreshList() {
  const listing = ++listings;
  try {
    const response = await fetch('/sessions?token=' + encodeURIComponent(token));
    if (!response.ok) throw new Error('listing sessions failed: HTTP ' + response.status);
    const sessions = (await response.json()).sessions;
    if (listing === listings) renderList(sessions);
  } catch (error) {
    if (listing === listings) showStatus(String(error.message || error), true);
  }
}

// The next poll is planned once the previous one answered, so slow listings never pile up.
async function pollList() {
  await refreshList();
  setTimeout(pollList, 2000);
}

function setWriting(writing) {
  if (!current) return;
  current.writing = writing;
  button.textContent = writing ? 'Release' : 'Take over';
  button.disabled = current.ended || !current.viewId;
  if (!current.ended) showStatus(writing ? 'you are typing (the agent waits while you type)' : 'read-only', false);
  if (writing) terminal.focus();
}

function select(sessionId) {
  if (current) current.source.close();
  pendingKeys = '';
  if (!terminalOpen) {
    placeholderEl.hidden = true;
    holder.hidden = false;
    terminal.open(holder);
    terminalOpen = true;
  }
  terminal.reset();
  titleEl.textContent = sessionId;
  showStatus('connecting…', false);
  const source = new EventSource('/sessions/' + encodeURIComponent(sessionId) + '/events?token=' + encodeURIComponent(token));
  const stream = { sessionId, source, viewId: '', writing: false, ended: false };
  current = stream;
  button.disabled = true;
  source.addEventListener('screen', (event) => {
    if (current !== stream) return;
    const first = JSON.parse(event.data);
    stream.viewId = first.viewId;
    terminal.reset();
    terminal.resize(first.cols, first.rows);
    fitWidth();
    terminal.write(first.screen);
    setWriting(first.writing);
  });
  source.addEventListener('output', (event) => {
    if (current !== stream) return;
    const text = atob(event.data);
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    terminal.write(bytes);
  });
  source.addEventListener('end', (event) => {
    source.close();
    if (current !== stream) return;
    stream.ended = true;
    setWriting(false);
    showStatus('session ended: ' + JSON.parse(event.data).reason, false);
    refreshList();
  });
  source.addEventListener('error', () => {
    if (current !== stream || stream.ended) return;
    if (source.readyState === EventSource.CLOSED) {
      stream.ended = true;
      setWriting(false);
      showStatus('cannot watch ' + sessionId + ' (it is gone, or the server stopped)', true);
      refreshList();
    } else {
      showStatus('connection lost; reconnecting…', true);
    }
  });
  refreshList();
}

async function flushKeys() {
  if (sending) return;
  sending = true;
  try {
    while (pendingKeys && current && current.writing) {
      const data = pendingKeys;
      pendingKeys = '';
      await post(current.sessionId, 'input', { viewId: current.viewId, data });
    }
  } catch (error) {
    showStatus(error.message, true);
    if (error.code === 'NOT_WRITER' || error.code === 'NO_VIEW') setWriting(false);
  } finally {
    sending = false;
  }
}

terminal.onData((data) => {
  if (!current || !current.writing) return;
  pendingKeys += data;
  flushKeys();
});

button.addEventListener('click', async () => {
  if (!current || !current.viewId) return;
  const stream = current;
  try {
    const answer = await post(stream.sessionId, stream.writing ? 'release' : 'takeover', { viewId: stream.viewId });
    if (current === stream) setWriting(answer.writing);
  } catch (error) {
    if (current === stream) showStatus(error.message, true);
  }
  refreshList();
});

pollList();
`
