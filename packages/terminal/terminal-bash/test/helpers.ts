import { Buffer } from 'node:buffer'
import { type PromptMarker, TerminalSanitizer, type TerminalSanitizerOptions } from '../src/output'

/** Raw bytes from a string whose code units are byte values (`'\xe2\x82'` is two bytes). */
export function raw(text: string): Buffer {
  return Buffer.from(text, 'latin1')
}

/** UTF-8 bytes of a string. */
export function utf8(text: string): Buffer {
  return Buffer.from(text, 'utf8')
}

/** Everything a sanitizer produced for a stream, in one comparable shape. */
export interface Rendered {
  /** Completed lines each followed by `\n`, then the final current line. */
  text: string
  markers: PromptMarker[]
  clipped: number[]
}

/** Feed chunks through a fresh sanitizer, end the stream, and collect the output. */
export function render(chunks: Iterable<Uint8Array | string>, options: TerminalSanitizerOptions = {}): Rendered {
  const sanitizer = new TerminalSanitizer(options)
  let text = ''
  const markers: PromptMarker[] = []
  const clipped: number[] = []
  const take = (chunk: ReturnType<TerminalSanitizer['write']>) => {
    for (const line of chunk.lines) text += line + '\n'
    markers.push(...chunk.markers)
    clipped.push(...chunk.clipped.map((index) => chunk.firstLine + index))
  }
  for (const chunk of chunks) take(sanitizer.write(typeof chunk === 'string' ? raw(chunk) : chunk))
  take(sanitizer.end())
  return { text: text + sanitizer.line.text(), markers, clipped }
}

/** Sanitized text of one raw-byte string fed whole. */
export function clean(text: string, options: TerminalSanitizerOptions = {}): string {
  return render([text], options).text
}
