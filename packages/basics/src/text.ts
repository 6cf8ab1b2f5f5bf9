import { keepUtf8Head, utf8ByteLength } from './utf8'

/** The longest delay `setTimeout` honours (2³¹ − 1 ms, about 24.8 days); a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * A duration as a person reads it, rounded down: `0.4 s`, `3 s`, `3.2 s` (one decimal below 10 s),
 * `12 s`, `3 min 5 s`, `2 h 1 min`; zero parts after the first are left out (`3 min`, `2 h`).
 */
export function formatDuration(ms: number): string {
  const clamped = Number.isFinite(ms) ? Math.max(0, ms) : 0
  if (clamped < 10_000) return `${Math.floor(clamped / 100) / 10} s`
  const seconds = Math.floor(clamped / 1000)
  if (seconds < 60) return `${seconds} s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return seconds % 60 ? `${minutes} min ${seconds % 60} s` : `${minutes} min`
  const hours = Math.floor(minutes / 60)
  return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`
}

/**
 * `text` as one line that cannot break a line format: runs of control characters and spaces become
 * one space, the ends are trimmed, and at most `maxBytes` UTF-8 bytes are kept (an ellipsis marks a cut).
 */
export function oneLine(text: string, maxBytes = Number.POSITIVE_INFINITY): string {
  const line = text
    .replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ')
    .replace(/ {2,}/g, ' ')
    .trim()
  if (utf8ByteLength(line) <= maxBytes) return line
  return `${keepUtf8Head(line, maxBytes - utf8ByteLength('…'))}…`
}
