import { keepUtf8Head } from './utf8'

// Why a line pattern was refused, in words a model can act on. The engine (re2js, a port of RE2)
// names its complaint and the offending text; this file turns that into one of two stable codes.

/** Bytes of a refused pattern echoed in a message, so a long pattern cannot fill a result. */
const ECHOED_PATTERN_BYTES = 100

/** Bytes of the offending text the engine names, echoed in a message. */
const ECHOED_PIECE_BYTES = 40

/**
 * Stable codes of a refused line pattern: `INVALID_PATTERN` is not a regular expression at all (nor
 * within the length bound); `UNSUPPORTED_PATTERN` is one that only a backtracking engine takes
 * (backreferences, lookaround, …) or one too large to test in bounded time.
 */
export type LinePatternErrorCode = 'INVALID_PATTERN' | 'UNSUPPORTED_PATTERN'

/** A pattern `LinePattern.compile` refused; `code` is stable, the message says what to write instead. */
export class LinePatternError extends Error {
  constructor(
    /** Stable code; callers route on it, never on the message. */
    readonly code: LinePatternErrorCode,
    message: string,
  ) {
    super(message)
    this.name = 'LinePatternError'
  }
}

/** The engine's syntax error, as re2js reports it: its complaint and the text it refers to. */
interface EngineComplaint {
  readonly error: string
  readonly input: string
}

/** A JavaScript construct the linear-time engine does not take, recognised from the engine's complaint. */
interface UnsupportedSyntax {
  /** The complaint the engine makes about it. */
  readonly complaint: string
  /** Whether the offending text the engine names is this construct. */
  readonly is: (piece: string) => boolean
  /** What the construct is, as the message names it. */
  readonly name: string
  /** What to write instead. */
  readonly instead: string
}

/** Whether `piece` starts with a backslash and a digit from 1 to 9 (`\1`: a backreference in JavaScript). */
function isNumberedBackreference(piece: string): boolean {
  const digit = piece.charCodeAt(1)
  return piece.startsWith('\\') && digit >= 0x31 && digit <= 0x39
}

/**
 * The JavaScript-only syntax a model is likely to write, each with its replacement. Anything else
 * the engine refuses but JavaScript takes is still `UNSUPPORTED_PATTERN`, with the engine's words.
 */
const UNSUPPORTED_SYNTAX: readonly UnsupportedSyntax[] = [
  {
    complaint: 'invalid escape sequence',
    is: isNumberedBackreference,
    name: 'a backreference (\\1)',
    instead: 'write the repeated text out again, e.g. "(ab)ab" instead of "(ab)\\1"',
  },
  {
    complaint: 'invalid escape sequence',
    is: (piece) => piece.startsWith('\\k'),
    name: 'a named backreference (\\k<name>)',
    instead: 'write the repeated text out again, e.g. "(?<x>ab)ab" instead of "(?<x>ab)\\k<x>"',
  },
  {
    complaint: 'invalid or unsupported Perl syntax',
    is: (piece) => piece.startsWith('(?=') || piece.startsWith('(?!'),
    name: 'a lookahead ((?=…) or (?!…))',
    instead: 'match the text itself: a line is tested whole, so "(?=.*a)(?=.*b)" becomes "a.*b|b.*a", and "x(?=y)" becomes "xy"',
  },
  {
    complaint: 'invalid named capture',
    is: (piece) => piece.startsWith('(?<=') || piece.startsWith('(?<!'),
    name: 'a lookbehind ((?<=…) or (?<!…))',
    instead: 'include the text before it in the pattern, e.g. "port \\d+" instead of "(?<=port )\\d+"',
  },
  {
    complaint: 'invalid escape sequence',
    is: (piece) => piece.startsWith('\\u'),
    name: 'a \\u escape',
    instead: 'write \\x{2713} for \\u2713',
  },
  {
    complaint: 'invalid escape sequence',
    is: (piece) => piece.startsWith('\\c'),
    name: 'a control escape (\\cA)',
    instead: 'write \\x01 for \\cA',
  },
  {
    complaint: 'missing closing ]',
    is: (piece) => piece.startsWith('[^]'),
    name: '[^] (any character)',
    instead: 'write [\\s\\S] for any character',
  },
  {
    complaint: 'invalid repeat count',
    is: () => true,
    name: 'a repeat count above 1000',
    instead: 'use * or + for "any number", or a count of at most 1000 (counts multiply when nested)',
  },
]

/** `label "<the pattern's first 100 bytes>"`, the way every message names the pattern. */
function named(label: string, source: string): string {
  return `${label} ${JSON.stringify(keepUtf8Head(source, ECHOED_PATTERN_BYTES))}`
}

/** The engine's complaint and text, or undefined when `thrown` is not one of its syntax errors. */
function complaintOf(thrown: unknown): EngineComplaint | undefined {
  const { error, input } = (thrown ?? {}) as { error?: unknown; input?: unknown }
  if (typeof error !== 'string') return undefined
  return { error, input: typeof input === 'string' ? input : '' }
}

/** Whether V8 parses `source` (parsing only: a RegExp is compiled on first use, which never happens here). */
function isJavaScriptRegExp(source: string): boolean {
  try {
    new RegExp(source)
    return true
  } catch {
    return false
  }
}

/**
 * Why the engine refused `source`: a construct from {@link UNSUPPORTED_SYNTAX}, else syntax that
 * JavaScript takes (`UNSUPPORTED_PATTERN`, in the engine's words), else `INVALID_PATTERN`.
 */
export function refusalOf(source: string, thrown: unknown, label: string): LinePatternError {
  const complaint = complaintOf(thrown)
  if (!complaint) throw thrown
  const construct = UNSUPPORTED_SYNTAX.find((row) => row.complaint === complaint.error && row.is(complaint.input))
  if (construct) {
    return new LinePatternError(
      'UNSUPPORTED_PATTERN',
      `${named(label, source)} uses ${construct.name}, which the linear-time matcher does not take; ${construct.instead}`,
    )
  }
  const piece = keepUtf8Head(complaint.input, ECHOED_PIECE_BYTES)
  const reason = piece ? `${complaint.error}: ${JSON.stringify(piece)}` : complaint.error
  if (isJavaScriptRegExp(source)) {
    return new LinePatternError(
      'UNSUPPORTED_PATTERN',
      `${named(label, source)} uses syntax the linear-time matcher does not take (${reason}); write it in RE2 syntax: no backreferences or lookaround`,
    )
  }
  return new LinePatternError('INVALID_PATTERN', `${named(label, source)} is not a valid regular expression (${reason})`)
}

/** A pattern longer than the bound: refused before the engine sees it. */
export function tooLong(label: string, maxLength: number): LinePatternError {
  return new LinePatternError('INVALID_PATTERN', `${label} must be at most ${maxLength} characters long`)
}

/** A pattern whose compiled program is above the bound: testing a line would cost too much. */
export function tooLarge(label: string, source: string, size: number, maxSize: number): LinePatternError {
  return new LinePatternError(
    'UNSUPPORTED_PATTERN',
    `${named(label, source)} is too large for the linear-time matcher (program size ${size}, at most ${maxSize}); ` +
      'use .* or + instead of long counted repeats such as .{0,300}, or a shorter pattern',
  )
}
