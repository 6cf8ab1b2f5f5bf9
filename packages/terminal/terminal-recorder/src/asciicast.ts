/**
 * The asciicast v2 format as recordings use it: a JSON header line, then one JSON array per event,
 * `[seconds, code, data]`. Codes: `o` output, `i` input, `r` resize (`COLSxROWS`), `m` marker.
 * Writing and reading live here together, so the recorder, the replay command and the web player
 * agree on one spelling of every line and marker.
 */

/** The first line of a recording. */
export interface AsciicastHeader {
  readonly version: 2
  readonly width: number
  readonly height: number
  /** Start of the session, seconds since the epoch. */
  readonly timestamp: number
  readonly title?: string
  /** Only `TERM` (and nothing else of any environment). */
  readonly env?: { readonly TERM?: string }
}

/** The event codes of asciicast v2. */
export const EVENT_CODES = ['o', 'i', 'r', 'm'] as const

/** One of {@link EVENT_CODES}. */
export type EventCode = (typeof EVENT_CODES)[number]

/** One event line, parsed. */
export interface AsciicastEvent {
  /** Seconds since the start of the recording. */
  readonly time: number
  readonly code: EventCode
  readonly data: string
}

/** A parsed recording: its header, its events in file order, and how many lines could not be read. */
export interface Asciicast {
  readonly header: AsciicastHeader
  readonly events: readonly AsciicastEvent[]
  /** Lines skipped because they were not events (a recording cut by a crash ends in half a line). */
  readonly skippedLines: number
}

/** A recording that cannot be read at all, with a stable code. */
export class AsciicastError extends Error {
  constructor(
    /** `NOT_ASCIICAST`: the first line is not an asciicast v2 header. */
    readonly code: 'NOT_ASCIICAST',
    message: string,
  ) {
    super(message)
    this.name = 'AsciicastError'
  }
}

/** The header line, newline included. */
export function headerLine(header: AsciicastHeader): string {
  return `${JSON.stringify(header)}\n`
}

/** One event line, newline included; the time is written in microseconds. */
export function eventLine(seconds: number, code: EventCode, data: string): string {
  return `[${seconds.toFixed(6)}, "${code}", ${JSON.stringify(data)}]\n`
}

/** The data of an `r` event. */
export function resizeData(size: { readonly cols: number; readonly rows: number }): string {
  return `${size.cols}x${size.rows}`
}

/** Read a whole recording; lines that are not events are counted, not fatal (see {@link Asciicast.skippedLines}). */
export function parseAsciicast(text: string): Asciicast {
  const lines = text.split('\n')
  const header = parseHeader(lines[0] ?? '')
  const events: AsciicastEvent[] = []
  let skippedLines = 0
  for (let index = 1; index < lines.length; index++) {
    const line = lines[index]!
    if (line === '') continue
    const event = parseEvent(line)
    if (event) events.push(event)
    else skippedLines++
  }
  return { header, events, skippedLines }
}

function parseHeader(line: string): AsciicastHeader {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    throw new AsciicastError('NOT_ASCIICAST', 'the first line is not JSON: not an asciicast v2 recording')
  }
  const header = value as Partial<AsciicastHeader> | null
  if (!header || typeof header !== 'object' || header.version !== 2 || !positive(header.width) || !positive(header.height)) {
    throw new AsciicastError('NOT_ASCIICAST', 'the first line is not an asciicast v2 header ({"version": 2, "width": …, "height": …})')
  }
  return header as AsciicastHeader
}

function parseEvent(line: string): AsciicastEvent | undefined {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return undefined
  }
  if (!Array.isArray(value) || value.length !== 3) return undefined
  const [time, code, data] = value as unknown[]
  if (typeof time !== 'number' || !Number.isFinite(time) || time < 0) return undefined
  if (typeof code !== 'string' || !(EVENT_CODES as readonly string[]).includes(code) || typeof data !== 'string') return undefined
  return { time, code: code as EventCode, data }
}

function positive(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0
}
