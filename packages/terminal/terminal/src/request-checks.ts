import { LinePattern, MAX_TIMER_MS, utf8ByteLength } from 'dsh-basics'
import { refuse } from './errors'
import { MAX_HUMAN_CLIENT_LENGTH, type TerminalHumanObserver, type TerminalHumanViewOptions } from './human'
import { keyNameProblem, MAX_TERMINAL_KEYS } from './keys'
import { MAX_TERMINAL_COLS, MAX_TERMINAL_ROWS, type TerminalSize } from './screen'
import { sessionNameProblem } from './names'
import type { TerminalReadRequest, TerminalSendOptions, TerminalSendRequest, TerminalSpawnRequest, TerminalTextSend } from './types'

/** A send presses keys or types text, never both; every key must be one a terminal can send. */
function checkKeys(keys: unknown, text: unknown, submit: unknown): void {
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > MAX_TERMINAL_KEYS) {
    throw refuse.invalid(`PTY send keys must be a list of 1 to ${MAX_TERMINAL_KEYS} key names`)
  }
  if ((text !== undefined && text !== '') || (submit !== undefined && submit !== false)) {
    throw refuse.invalid('PTY send takes keys or text, not both: with keys, text must be empty and submit false (press Enter as a key)')
  }
  for (const key of keys) {
    const problem = typeof key === 'string' ? keyNameProblem(key) : 'a key name must be a string'
    if (problem) throw refuse.invalid(`PTY send keys: ${problem}`)
  }
}

/** A window size within the bounds every backend accepts. */
export function checkSize(size: TerminalSize, what: string): void {
  const ok = (value: unknown, max: number) => Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= max
  if (typeof size !== 'object' || size === null || !ok(size.rows, MAX_TERMINAL_ROWS) || !ok(size.cols, MAX_TERMINAL_COLS)) {
    throw refuse.invalid(`${what} must be {rows, cols} with rows from 1 to ${MAX_TERMINAL_ROWS} and cols from 1 to ${MAX_TERMINAL_COLS}`)
  }
}

/** The options every kind of send shares. */
function checkSendOptions(request: TerminalSendOptions): void {
  if (request.outlivesOwner !== undefined && typeof request.outlivesOwner !== 'boolean') throw refuse.invalid('PTY send outlivesOwner must be a boolean')
  if (request.settleOnSilence !== undefined && typeof request.settleOnSilence !== 'boolean') {
    throw refuse.invalid('PTY send settleOnSilence must be a boolean')
  }
  for (const key of ['timeoutMs', 'idleMs'] as const) {
    const value = request[key]
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 1 && value <= MAX_TIMER_MS)) {
      throw refuse.invalid(`PTY send ${key} must be an integer from 1 to ${MAX_TIMER_MS}`)
    }
  }
  if (request.waitFor !== undefined && !(request.waitFor instanceof LinePattern)) {
    // A RegExp would backtrack on the host's event loop: only a linear-time pattern is taken.
    throw refuse.invalid('PTY send waitFor must be a LinePattern (LinePattern.compile from dsh-basics), not a RegExp')
  }
}

/** A field the send's kind does not take: refused rather than ignored. */
function refuseField(kind: string, field: string, value: unknown): void {
  if (value !== undefined) throw refuse.invalid(`PTY send of kind ${kind} takes no ${field}`)
}

/**
 * Every field of one send, checked once at the registry, before anything is written; `maxTextBytes`
 * bounds `text` for every caller. Answers the request the backend gets: the same object, except
 * that keys given the older way (`text: ""`, `submit: false`, no `kind`) come back as a keys send.
 */
export function checkSendRequest(request: TerminalSendRequest, maxTextBytes: number): TerminalSendRequest {
  if (!request || typeof request !== 'object') throw refuse.invalid('PTY send text must be a string')
  checkSendOptions(request)
  // What a JavaScript caller may put in any field, whatever the types say.
  const loose = request as { kind?: unknown; text?: unknown; submit?: unknown; keys?: unknown; size?: unknown }
  if (loose.size !== undefined) checkSize(loose.size as TerminalSize, 'PTY send size')
  switch (loose.kind) {
    case undefined:
    case 'text': {
      if (typeof loose.text !== 'string') throw refuse.invalid('PTY send text must be a string')
      if (typeof loose.submit !== 'boolean') throw refuse.invalid('PTY send submit must be a boolean')
      if (loose.keys !== undefined) {
        checkKeys(loose.keys, loose.text, loose.submit)
        const { text: _text, submit: _submit, ...keysSend } = request as TerminalTextSend
        return { ...keysSend, kind: 'keys', keys: loose.keys as readonly string[] }
      }
      // Checked here, not in a tool, so every caller is bounded: readline takes time per byte of a line.
      const bytes = utf8ByteLength(loose.text)
      if (bytes > maxTextBytes) throw refuse.textTooLarge(bytes, maxTextBytes)
      return request
    }
    case 'keys':
      checkKeys(loose.keys, loose.text, loose.submit)
      return request
    case 'resize':
      if (loose.size === undefined) throw refuse.invalid('PTY send of kind resize needs size {rows, cols}')
      refuseField('resize', 'text', loose.text)
      refuseField('resize', 'submit', loose.submit)
      refuseField('resize', 'keys', loose.keys)
      return request
    case 'wait':
      refuseField('wait', 'text', loose.text)
      refuseField('wait', 'submit', loose.submit)
      refuseField('wait', 'keys', loose.keys)
      refuseField('wait', 'size', loose.size)
      return request
    default:
      throw refuse.invalid('PTY send kind must be text, keys, resize or wait')
  }
}

/**
 * A spawn request, in this order: a backend type, a size within bounds, a registered backend of that
 * type (`backendOf`, which it answers), then a valid name, cwd and target.
 */
export function checkSpawnRequest<B>(request: TerminalSpawnRequest, backendOf: (type: string) => B | undefined): B {
  if (!request || typeof request.type !== 'string') throw refuse.invalid('PTY spawn request needs a backend type')
  if (request.size !== undefined) checkSize(request.size, 'PTY spawn size')
  const backend = backendOf(request.type)
  if (!backend) throw refuse.noBackend(request.type)
  const { name, cwd } = request
  if (name !== undefined) {
    const problem = typeof name === 'string' ? sessionNameProblem(name) : 'PTY session name must be a non-empty string'
    if (problem) throw refuse.invalid(problem)
  }
  if (cwd !== undefined && typeof cwd !== 'string') throw refuse.invalid('PTY session cwd must be a string')
  if (request.target !== undefined && (typeof request.target !== 'string' || request.target === '')) {
    throw refuse.invalid('PTY session target must be a non-empty string: the name of a target of the subprocess entry')
  }
  return backend
}

/** A client name a model may read: non-empty, bounded, no control characters. */
function isClientName(client: unknown): client is string {
  return typeof client === 'string' && client.length > 0 && client.length <= MAX_HUMAN_CLIENT_LENGTH && !/\p{Cc}/u.test(client)
}

/** A person's view: an observer with both callbacks, and a client name a model may read. */
export function checkHumanView(observer: TerminalHumanObserver, options: TerminalHumanViewOptions | undefined): void {
  if (!observer || typeof observer.onOutput !== 'function' || typeof observer.onEnd !== 'function') {
    throw refuse.invalid('a human observer needs onOutput and onEnd functions')
  }
  const client = options?.client
  if (client !== undefined && !isClientName(client)) {
    throw refuse.invalid(`a human view's client must be 1 to ${MAX_HUMAN_CLIENT_LENGTH} printable characters (e.g. "the web view in a browser")`)
  }
}

/** A read page request: non-negative `offset`/`count`, a positive `fromLine`, never both `fromLine` and `offset`. */
export function checkReadRequest(request: TerminalReadRequest): void {
  for (const key of ['offset', 'count'] as const) {
    const value = request?.[key]
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0)) {
      throw refuse.invalid(`PTY read ${key} must be a non-negative integer`)
    }
  }
  const fromLine = request?.fromLine
  if (fromLine !== undefined) {
    if (!(Number.isSafeInteger(fromLine) && fromLine >= 1)) {
      throw refuse.invalid(
        'PTY read fromLine must be a positive integer: the absolute number of a line, 1 being the first line ' +
          'the session printed (the lineBegin, lineEnd and oldestLine of a read are such numbers)',
      )
    }
    if (request.offset !== undefined) {
      throw refuse.invalid(
        'PTY read takes fromLine or offset, not both: fromLine reads forward from that absolute line, ' +
          'offset reads back from the newest line; leave one out',
      )
    }
  }
}
