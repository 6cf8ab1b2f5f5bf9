import { Buffer } from 'node:buffer'
import type { OutputShape } from '../src/index'

/** Shared by the shapeOutput tests: reads a shaped text back into its parts, independently of the implementation. */

/** UTF-8 size, measured by Node rather than by the helpers under test. */
export const bytes = (text: string) => Buffer.byteLength(text, 'utf8')

/** A fold line, with the number of repeats it stands for in group 1. */
export const FOLD_LINE = /^\[… (\d+) more identical lines?\]$/

/** An elision line, plain or quoting a call. */
export const ELISION_LINE = /^\[… (\d+) lines? \((.+?)\) left out(?:; (.+) returns (?:it|them))?\]$/

/** The example call from the brief, for a session `pty-1`. */
export const terminalRead = (fromLine: number, count: number) => `terminal_read {"sessionId":"pty-1","fromLine":${fromLine},"count":${count}}`

/** `count` copies of `line`. */
export const repeat = (line: string, count: number) => Array.from({ length: count }, () => line)

/** The parts of a shaped text: the lines before the elision line, the line itself, and the lines after it. */
export interface ShapedParts {
  head: string[]
  elision?: string
  tail: string[]
}

/** Split a shaped text at its elision line (test inputs never contain one). */
export function shapedParts(shape: OutputShape): ShapedParts {
  const lines = shape.text.split('\n')
  const at = lines.findIndex((line) => ELISION_LINE.test(line))
  if (at < 0) return { head: lines, tail: [] }
  return { head: lines.slice(0, at), elision: lines[at], tail: lines.slice(at + 1) }
}

/** Replace each fold line by the copies of the line above it it stands for; a fold line with nothing above it throws. */
export function unfold(lines: readonly string[]): string[] {
  const out: string[] = []
  for (const line of lines) {
    const fold = FOLD_LINE.exec(line)
    if (!fold) {
      out.push(line)
      continue
    }
    if (out.length === 0) throw new Error(`fold line without a line to repeat: ${line}`)
    const subject = out[out.length - 1]!
    for (let copy = 0; copy < Number(fold[1]); copy++) out.push(subject)
  }
  return out
}

/** Repeats stated by the fold lines among `lines`. */
export function foldedCount(lines: readonly string[]): number {
  return lines.reduce((sum, line) => sum + Number(FOLD_LINE.exec(line)?.[1] ?? 0), 0)
}

/** The longest code-point suffix of `text` within `maxBytes` UTF-8 bytes, by walking code points. */
export function codePointTail(text: string, maxBytes: number): string {
  const points = Array.from(text)
  let kept = ''
  for (let index = points.length - 1; index >= 0; index--) {
    if (bytes(points[index]! + kept) > maxBytes) break
    kept = points[index]! + kept
  }
  return kept
}
