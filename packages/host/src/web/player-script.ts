/**
 * The recording player's own script (plain browser JavaScript), inlined into the player page. It
 * lists the recordings, plays one into xterm.js with its pauses, and draws a timeline of the send
 * markers: a click on one seeks there (everything before it is drawn at once). Read-only: it never
 * talks to a session.
 */
export const PLAYER_SCRIPT = `
'use strict';
const token = new URLSearchParams(location.search).get('token') || '';
const listEl = document.getElementById('recordings');
const emptyEl = document.getElementById('empty');
const titleEl = document.getElementById('title');
const statusEl = document.getElementById('status');
const playButton = document.getElementById('play');
const speedEl = document.getElementById('speed');
const clockEl = document.getElementById('clock');
const timelineEl = document.getElementById('timeline');
const progressEl = document.getElementById('progress');
const holder = document.getElementById('terminal');
/** Pauses longer than this (recorded seconds) play as this, as dsh-terminal replay does. */
const MAX_PAUSE = 2;
const terminal = new Terminal({ rows: 24, cols: 80, scrollback: 5000, fontSize: 14, allowProposedApi: true, disableStdin: true });
terminal.loadAddon(new Unicode11Addon.Unicode11Addon());
terminal.unicode.activeVersion = '11';
terminal.open(holder);

/** The recording on screen: { name, events, sends, duration }, the next event to play, and the timer. */
let recording = null;
let next = 0;
let timer = null;

function showStatus(text, isError) {
  statusEl.textContent = text;
  statusEl.className = isError ? 'error' : '';
}

/** m:ss.t: sends of a quick session lie tenths of a second apart. */
function clock(seconds) {
  const tenths = Math.floor(seconds * 10);
  return Math.floor(tenths / 600) + ':' + String(Math.floor(tenths / 10) % 60).padStart(2, '0') + '.' + (tenths % 10);
}

/** Closest two marks may sit on the timeline, in percent of its width: sends a moment apart stay apart and clickable. */
const MARK_SPACING = 3;

/** One asciicast v2 file: its header and events; lines that are not events (a torn last line) are skipped. */
function parse(text) {
  const lines = text.split('\\n');
  const header = JSON.parse(lines[0]);
  const events = [];
  for (const line of lines.slice(1)) {
    if (!line) continue;
    try {
      const event = JSON.parse(line);
      if (Array.isArray(event) && event.length === 3) events.push(event);
    } catch (error) {}
  }
  return { header, events };
}

/** The send markers ('send 3 (call x)') with the outcome their end marker names. */
function sendsOf(events) {
  const sends = new Map();
  events.forEach((event, index) => {
    if (event[1] !== 'm') return;
    const start = /^send (\\d+)(?: \\(call ([^)]*)\\))?$/.exec(event[2]);
    if (start) {
      sends.set(start[1], { number: Number(start[1]), callId: start[2] || '', time: event[0], index, outcome: '' });
      return;
    }
    const end = /^send (\\d+) done(?: \\(call [^)]*\\))?: (.*)$/.exec(event[2]);
    if (end && sends.has(end[1])) sends.get(end[1]).outcome = end[2];
  });
  return [...sends.values()];
}

function apply(event) {
  if (event[1] === 'o') terminal.write(event[2]);
  else if (event[1] === 'r') {
    const size = /^(\\d+)x(\\d+)$/.exec(event[2]);
    if (size) terminal.resize(Number(size[1]), Number(size[2]));
  }
}

function showPosition() {
  if (!recording) return;
  const time = next > 0 ? recording.events[Math.min(next, recording.events.length) - 1][0] : 0;
  clockEl.textContent = clock(time) + ' / ' + clock(recording.duration);
  progressEl.style.width = (recording.duration > 0 ? (100 * time) / recording.duration : 0) + '%';
  for (const mark of timelineEl.querySelectorAll('.mark')) mark.classList.toggle('passed', Number(mark.dataset.index) < next);
}

function pause() {
  if (timer !== null) clearTimeout(timer);
  timer = null;
  playButton.textContent = 'Play';
}

function step() {
  timer = null;
  if (!recording) return;
  if (next >= recording.events.length) {
    pause();
    showStatus('end of the recording', false);
    return;
  }
  apply(recording.events[next]);
  next++;
  showPosition();
  if (next >= recording.events.length) return step();
  const gap = Math.min(MAX_PAUSE, Math.max(0, recording.events[next][0] - recording.events[next - 1][0]));
  timer = setTimeout(step, (gap * 1000) / Number(speedEl.value));
}

function play() {
  if (!recording) return;
  if (next >= recording.events.length) seek(0);
  playButton.textContent = 'Pause';
  showStatus('playing', false);
  if (timer === null) step();
}

/** Draw everything before event index at once, then continue from there (playing or not, as before). */
function seek(index) {
  const playing = timer !== null;
  pause();
  terminal.reset();
  terminal.resize(recording.header.width, recording.header.height);
  for (let i = 0; i < index; i++) apply(recording.events[i]);
  next = index;
  showPosition();
  if (playing) play();
}

function drawTimeline(sends) {
  timelineEl.querySelectorAll('.mark').forEach((mark) => mark.remove());
  let previous = -MARK_SPACING;
  for (const send of sends) {
    const at = Math.min(100, Math.max(previous + MARK_SPACING, recording.duration > 0 ? (100 * send.time) / recording.duration : 0));
    previous = at;
    const mark = document.createElement('button');
    mark.type = 'button';
    mark.className = 'mark';
    mark.dataset.index = String(send.index);
    mark.dataset.send = String(send.number);
    mark.textContent = String(send.number);
    mark.title = 'send ' + send.number + (send.callId ? ' (call ' + send.callId + ')' : '') + (send.outcome ? ': ' + send.outcome : '') + ' at ' + clock(send.time);
    mark.style.left = at + '%';
    mark.addEventListener('click', () => {
      seek(send.index);
      showStatus('at ' + mark.title, false);
    });
    timelineEl.append(mark);
  }
}

async function load(name) {
  pause();
  showStatus('loading ' + name + '…', false);
  for (const item of listEl.children) item.classList.toggle('selected', item.dataset.name === name);
  try {
    const response = await fetch('/recordings/' + encodeURIComponent(name) + '?token=' + encodeURIComponent(token));
    if (!response.ok) throw new Error('cannot load ' + name + ': HTTP ' + response.status);
    const { header, events } = parse(await response.text());
    const duration = events.length ? events[events.length - 1][0] : 0;
    recording = { name, header, events, sends: sendsOf(events), duration };
    titleEl.textContent = header.title || name;
    playButton.disabled = false;
    drawTimeline(recording.sends);
    seek(0);
    showStatus(recording.sends.length + ' sends; press Play, or pick a send on the timeline', false);
  } catch (error) {
    showStatus(String(error.message || error), true);
  }
}

async function loadList() {
  try {
    const response = await fetch('/recordings?token=' + encodeURIComponent(token));
    if (!response.ok) throw new Error('listing recordings failed: HTTP ' + response.status);
    const answer = await response.json();
    listEl.replaceChildren();
    emptyEl.hidden = answer.recordings.length > 0;
    if (!answer.enabled) emptyEl.textContent = 'This host records nothing: start it with --preset recorded (or enable the record entry of your composition).';
    for (const name of answer.recordings) {
      const item = document.createElement('li');
      item.dataset.name = name;
      item.textContent = name;
      item.addEventListener('click', () => load(name));
      listEl.append(item);
    }
    const wanted = new URLSearchParams(location.search).get('name');
    if (wanted && answer.recordings.includes(wanted)) load(wanted);
  } catch (error) {
    showStatus(String(error.message || error), true);
  }
}

playButton.addEventListener('click', () => (timer === null ? play() : pause()));
loadList();
`
