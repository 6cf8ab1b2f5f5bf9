/**
 * The program of the recorder's writer thread (plain JavaScript, run with `new Worker(…, {eval: true})`
 * so it needs no file of its own in sources, `dist` or a bundle). Everything that costs per byte
 * happens here, on another core than the sessions: UTF-8 decoding, JSON escaping, the byte budget of
 * `maxBytesPerSession`, and the writes, in order, with one file descriptor per recording.
 *
 * Messages in: `open {id, path, header, maxBytes, reserve}`, `events {id, items, bytes}` (items are
 * `[seconds, code, text]`, or `[seconds, 'o', start, end]` for output bytes in `bytes`), `close {id, reason}`.
 * Messages out: `thread {tid}` first (its kernel thread id, for {@link WriterPace}), `written {id, bytes}`
 * (queued bytes it took off the main thread's hands), `stopped {id}`, `error {id, message}`, `closed {id}`.
 */
import { WRITER_NICE } from './writer-pace'

export const WRITER_THREAD_SOURCE = `
'use strict';
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const { isUtf8 } = require('node:buffer');
const FLAGS = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW;
const files = new Map();
// Linux keeps a nice value per thread, and this call (pid 0) sets the calling thread's: the writer
// takes the CPU the sessions leave, and falls behind (bounded) rather than slow them down.
try { require('node:os').setPriority(${WRITER_NICE}); } catch (ignored) {}
// Its kernel thread id, so the main thread can raise its priority while a recording falls behind.
let tid;
try { tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop()); } catch (ignored) {}
parentPort.postMessage({ kind: 'thread', tid: Number.isSafeInteger(tid) ? tid : undefined });

/** A text event as one line. */
function line(seconds, code, data) {
  return Buffer.from('[' + seconds.toFixed(6) + ', "' + code + '", ' + JSON.stringify(data) + ']\\n', 'utf8');
}

/**
 * How each byte appears inside a JSON string: 0 as it is (printable ASCII and every byte from 0x80 up,
 * so UTF-8 sequences pass through whole), 1 as \\u00XX, else the letter after a backslash.
 */
const ESCAPE = new Uint8Array(256);
for (let byte = 0; byte < 0x20; byte++) ESCAPE[byte] = 1;
ESCAPE[0x08] = 0x62; ESCAPE[0x09] = 0x74; ESCAPE[0x0a] = 0x6e; ESCAPE[0x0c] = 0x66; ESCAPE[0x0d] = 0x72;
ESCAPE[0x22] = 0x22; ESCAPE[0x5c] = 0x5c;
const HEX = Buffer.from('0123456789abcdef', 'latin1');

const NO_WORDS = new Uint32Array(0);
/** This machine's byte order, which a Uint32Array reads words in. */
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/** One byte at \`at\` of \`out\`, escaped when JSON needs it; returns where the next byte goes (room for 6 is the caller's). */
function putByte(out, at, byte) {
  const escape = ESCAPE[byte];
  if (escape === 0) { out[at] = byte; return at + 1; }
  out[at] = 0x5c;
  if (escape !== 1) { out[at + 1] = escape; return at + 2; }
  out[at + 1] = 0x75; out[at + 2] = 0x30; out[at + 3] = 0x30; out[at + 4] = HEX[byte >> 4]; out[at + 5] = HEX[byte & 15];
  return at + 6;
}

/**
 * True when one of the four bytes of \`word\` may need escaping: a control (below 0x20), a quote or a
 * backslash. Exact for "any byte below 0x20" and "any byte equal to", so no such byte is missed; a word
 * it flags is then escaped byte by byte.
 */
function mayEscape(word) {
  const quote = word ^ 0x22222222;
  const backslash = word ^ 0x5c5c5c5c;
  return (((word - 0x20202020) & ~word) | ((quote - 0x01010101) & ~quote) | ((backslash - 0x01010101) & ~backslash)) & 0x80808080;
}

/**
 * An output event straight from valid UTF-8 bytes, never decoded: controls, quote and backslash are
 * escaped (what JSON.stringify of the text would escape), everything else, UTF-8 sequences included,
 * comes out byte for byte. Four bytes are looked at at once, and a word with nothing to escape is
 * written as one (a DataView write at any offset: no call or view per clean run, which a flood has
 * one of per line).
 */
function outputLine(seconds, bytes) {
  const head = '[' + seconds.toFixed(6) + ', "o", "';
  const length = bytes.length;
  let out = Buffer.allocUnsafe(head.length + length + (length >> 3) + 32);
  let view = new DataView(out.buffer, out.byteOffset, out.length);
  let at = out.latin1Write(head, 0);
  /** Room for \`count\` more bytes (a run of controls can need six per byte). */
  const room = (count) => {
    if (out.length - at >= count) return;
    const larger = Buffer.allocUnsafe(at + count + (length >> 2) + 32);
    out.copy(larger, 0, 0, at);
    out = larger;
    view = new DataView(out.buffer, out.byteOffset, out.length);
  };
  // Bytes before the first 4-byte boundary of the underlying memory, one at a time.
  const lead = Math.min(length, (4 - (bytes.byteOffset & 3)) & 3);
  room(6 * lead);
  for (let index = 0; index < lead; index++) at = putByte(out, at, bytes[index]);
  const wordCount = (length - lead) >> 2;
  const words = wordCount > 0 ? new Uint32Array(bytes.buffer, bytes.byteOffset + lead, wordCount) : NO_WORDS;
  for (let word = 0; word < wordCount; word++) {
    const value = words[word];
    if (mayEscape(value) === 0) {
      if (out.length - at < 4) room(4);
      // In the byte order the Uint32Array read it in: the same four bytes.
      view.setUint32(at, value, LITTLE_ENDIAN);
      at += 4;
      continue;
    }
    room(24);
    const first = lead + word * 4;
    for (let index = first; index < first + 4; index++) at = putByte(out, at, bytes[index]);
  }
  const tail = lead + wordCount * 4;
  room(6 * (length - tail) + 3);
  for (let index = tail; index < length; index++) at = putByte(out, at, bytes[index]);
  out[at++] = 0x22; out[at++] = 0x5d; out[at++] = 0x0a;
  return out.subarray(0, at);
}

/** How many bytes at the end of \`bytes\` begin a UTF-8 character the next chunk completes. */
function incompleteTail(bytes) {
  for (let back = 1; back <= 3 && back <= bytes.length; back++) {
    const byte = bytes[bytes.length - back];
    if (byte < 0x80) return 0;
    if (byte >= 0xc0) {
      const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
      return length > back ? back : 0;
    }
  }
  return 0;
}

/** Output bytes as events: whole characters now, a split one with the next chunk; bytes that are not UTF-8 become U+FFFD. */
function output(file, seconds, chunk, out) {
  let bytes = chunk;
  if (file.carry) {
    bytes = Buffer.concat([file.carry, chunk]);
    file.carry = undefined;
  }
  const tail = incompleteTail(bytes);
  if (tail > 0) {
    file.carry = Buffer.from(bytes.subarray(bytes.length - tail));
    bytes = bytes.subarray(0, bytes.length - tail);
  }
  if (bytes.length === 0) return;
  if (isUtf8(bytes)) add(file, outputLine(seconds, bytes), seconds, out);
  else add(file, line(seconds, 'o', Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8')), seconds, out);
}

/** Write \`buffers\` in order, all of them (writev, at most 1024 at a time; a short write continues where it stopped). */
function write(file, buffers) {
  if (file.fd === undefined || buffers.length === 0) return;
  for (let first = 0; first < buffers.length; first += 1024) {
    const batch = buffers.slice(first, first + 1024);
    let total = 0;
    for (const buffer of batch) total += buffer.length;
    let written = fs.writevSync(file.fd, batch);
    if (written < total) {
      const all = Buffer.concat(batch);
      while (written < total) written += fs.writeSync(file.fd, all, written, total - written);
    }
  }
}

function fail(file, error) {
  file.stopped = true;
  if (file.fd !== undefined) {
    try { fs.closeSync(file.fd); } catch (ignored) {}
    file.fd = undefined;
  }
  parentPort.postMessage({ kind: 'error', id: file.id, message: String(error && error.message || error) });
}

/** Append one line unless it would pass the budget; then the stop marker (within the reserve) ends the file. */
function add(file, buffer, seconds, out) {
  if (file.stopped) return;
  if (file.bytes + buffer.length > file.maxBytes - file.reserve) return stop(file, seconds, 'maxBytesPerSession (' + file.maxBytes + ' bytes) reached', out);
  file.bytes += buffer.length;
  out.push(buffer);
}

function stop(file, seconds, reason, out) {
  if (file.stopped) return;
  const buffer = line(seconds, 'm', ('recording stopped: ' + reason).slice(0, file.reserve / 4));
  file.bytes += buffer.length;
  out.push(buffer);
  file.stopped = true;
  parentPort.postMessage({ kind: 'stopped', id: file.id });
}

function open(message) {
  const file = { id: message.id, fd: undefined, bytes: 0, maxBytes: message.maxBytes, reserve: message.reserve, stopped: false, carry: undefined, last: 0 };
  files.set(message.id, file);
  try {
    file.fd = fs.openSync(message.path, FLAGS, 0o600);
    const header = Buffer.from(message.header, 'utf8');
    file.bytes = header.length;
    write(file, [header]);
  } catch (error) {
    fail(file, error);
  }
}

function events(message) {
  const file = files.get(message.id);
  if (!file) return;
  const bytes = message.bytes ? Buffer.from(message.bytes) : undefined;
  const out = [];
  for (const item of message.items) {
    if (file.stopped) break;
    file.last = item[0];
    if (item[1] === 'o' && item.length === 4) output(file, item[0], bytes.subarray(item[2], item[3]), out);
    else add(file, line(item[0], item[1], item[2]), item[0], out);
  }
  try {
    write(file, out);
  } catch (error) {
    fail(file, error);
  }
  parentPort.postMessage({ kind: 'written', id: message.id, bytes: message.queued });
}

function close(message) {
  const file = files.get(message.id);
  if (file) {
    files.delete(message.id);
    const out = [];
    if (file.carry && !file.stopped) add(file, line(file.last, 'o', file.carry.toString('utf8')), file.last, out);
    if (message.reason) stop(file, message.seconds, message.reason, out);
    try {
      write(file, out);
      if (file.fd !== undefined) fs.closeSync(file.fd);
    } catch (error) {
      fail(file, error);
    }
  }
  parentPort.postMessage({ kind: 'closed', id: message.id });
}

/** The main thread gave up on a recording (the disk fell behind): the stop marker, nothing after it. */
function giveUp(message) {
  const file = files.get(message.id);
  if (!file) return;
  const out = [];
  stop(file, message.seconds, message.reason, out);
  try {
    write(file, out);
  } catch (error) {
    fail(file, error);
  }
}

parentPort.on('message', (message) => {
  if (message.kind === 'open') open(message);
  else if (message.kind === 'events') events(message);
  else if (message.kind === 'stop') giveUp(message);
  else if (message.kind === 'close') close(message);
});
`
