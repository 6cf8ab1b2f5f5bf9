import { Buffer } from 'node:buffer'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { FoldedOutput, formatByteSize, type OutputShape, type OutputShapeOptions, shapeOutput } from '../src/index'
import { bytes, codePointTail, ELISION_LINE, FOLD_LINE, foldedCount, shapedParts, terminalRead, unfold } from './shape-reading'

// Properties of shapeOutput over generated outputs: runs of repeats, multi-byte and astral characters,
// combining accents, blank lines, and budgets from nothing to more than the text.

const unit = fc.constantFrom('a', 'b', 'z', ' ', '\t', '\r', 'é', 'e\u0301', '漢', '€', '😀', '👍🏽')
const line = fc.string({ unit, maxLength: 16 })
/** The last line may be long, so that it sometimes has to be cut to its tail. */
const lastLine = fc.oneof(line, fc.string({ unit, maxLength: 120 }))
/** Lines in runs, so that folding has something to do. */
const outputText = fc
  .tuple(fc.array(fc.tuple(line, fc.integer({ min: 1, max: 40 })), { maxLength: 24 }), lastLine, fc.boolean())
  .map(([runs, last, endsInNewline]) => {
    const lines = runs.flatMap(([text, count]) => Array.from({ length: count }, () => text))
    return [...lines, last].join('\n') + (endsInNewline ? '\n' : '')
  })
const options = (text: string) =>
  fc.record(
    {
      // Tiny budgets (no room for an elision line) get their own share of the runs.
      maxBytes: fc.oneof(fc.integer({ min: 0, max: 48 }), fc.integer({ min: 0, max: bytes(text) + 16 })),
      foldRepeats: fc.boolean(),
      firstLine: fc.integer({ min: 0, max: 1_000_000 }),
      readCall: fc.constant(terminalRead),
    },
    { requiredKeys: ['maxBytes'] },
  )
const shaped = outputText.chain((text) => options(text).map((option) => ({ text, option })))

const check = (property: (text: string, option: OutputShapeOptions, shape: OutputShape) => void) =>
  fc.assert(
    fc.property(shaped, ({ text, option }) => property(text, option, shapeOutput(text, option))),
    { numRuns: 400 },
  )

describe('shapeOutput properties', () => {
  it('stays within maxBytes, measures itself and the input, and round-trips as UTF-8', () => {
    check((text, option, shape) => {
      expect(bytes(shape.text)).toBeLessThanOrEqual(option.maxBytes)
      expect(shape.shownBytes).toBe(bytes(shape.text))
      expect(shape.bytes).toBe(bytes(text))
      expect(shape.lines).toBe(text.split('\n').length)
      expect(Buffer.from(shape.text).toString()).toBe(shape.text)
      expect(shapeOutput(text, option)).toEqual(shape)
    })
  })

  it('loses nothing from an input that fits, and without folding returns it unchanged', () => {
    check((text, option, shape) => {
      if (bytes(text) > option.maxBytes) return
      expect(shape).toMatchObject({ lines: text.split('\n').length, bytes: bytes(text), omittedLines: 0, omittedBytes: 0, truncated: false })
      if (option.foldRepeats !== false && shape.foldedLines > 0) return
      expect(shape).toEqual({
        text,
        lines: shape.lines,
        bytes: bytes(text),
        shownBytes: bytes(text),
        omittedLines: 0,
        omittedBytes: 0,
        foldedLines: 0,
        truncated: false,
      })
    })
  })

  it('loses nothing when only folding: unfolding gives the input back, and every fold saves bytes', () => {
    check((text, option, shape) => {
      if (shape.truncated) return
      const lines = shape.text.split('\n')
      expect(unfold(lines).join('\n')).toBe(text)
      expect(shape.foldedLines).toBe(foldedCount(lines))
      if (option.foldRepeats === false) expect(shape.foldedLines).toBe(0)
      expect(FOLD_LINE.test(lines.at(-1)!)).toBe(false)
      lines.forEach((fold, at) => {
        const repeats = Number(FOLD_LINE.exec(fold)?.[1] ?? 0)
        if (repeats) expect(bytes(lines[at - 1]!) + 1 + bytes(fold)).toBeLessThan((repeats + 1) * bytes(lines[at - 1]!) + repeats)
      })
    })
  })

  it('elides whole lines between an input prefix and an input suffix whose last line may be cut, and the counts add up', () => {
    check((text, option, shape) => {
      const { head, elision, tail } = shapedParts(shape)
      if (!elision) return
      const lines = text.split('\n')
      const shownHead = unfold(head)
      const shownTail = unfold(tail)
      const lastShown = shownTail.pop()!
      // A cut keeps at least one code point of the last line.
      expect(lastShown === '').toBe(lines.at(-1) === '')
      expect(lastShown).toBe(codePointTail(lines.at(-1)!, bytes(lastShown)))
      expect(shownHead).toEqual(lines.slice(0, shownHead.length))
      expect(shownTail).toEqual(lines.slice(lines.length - 1 - shownTail.length, -1))
      const omitted = lines.slice(shownHead.length, lines.length - 1 - shownTail.length)
      const [, stated, size] = ELISION_LINE.exec(elision)!
      expect(Number(stated)).toBe(omitted.length)
      expect(size).toBe(formatByteSize(bytes(omitted.join('\n')) + 1))
      expect(shape.omittedLines).toBe(omitted.length)
      expect(shape.omittedLines).toBeGreaterThan(0)
      expect(shape.omittedBytes).toBe(bytes(text) - bytes([...shownHead, ...shownTail, lastShown].join('\n')))
      const folds = foldedCount(head) + foldedCount(tail)
      const shownLines = [...head, ...tail].filter((shown) => !FOLD_LINE.test(shown)).length
      expect(shape.foldedLines).toBe(folds)
      expect(shownLines + shape.omittedLines + shape.foldedLines).toBe(shape.lines)
      expect(shape.omitted).toEqual(option.firstLine === undefined ? undefined : { fromLine: option.firstLine + shownHead.length, count: omitted.length })
      expect(shape.truncated).toBe(true)
    })
  })

  it('without room for an elision line, keeps the longest code-point tail of the input', () => {
    check((text, option, shape) => {
      if (!shape.truncated || shapedParts(shape).elision) return
      expect(shape.text).toBe(codePointTail(text, option.maxBytes))
      expect(shape.foldedLines).toBe(0)
      expect(shape.omittedBytes).toBe(bytes(text) - shape.shownBytes)
      // A line is shown when a byte of it is, or when it is empty and lies wholly inside the kept tail.
      const keptFrom = text.length - shape.text.length
      let start = 0
      let shown = 0
      for (const input of text.split('\n')) {
        const end = start + input.length
        if (end > keptFrom || start >= keptFrom) shown++
        start = end + 1
      }
      expect(shape.omittedLines).toBe(shape.lines - shown)
      const omittedCount = shape.omittedLines
      expect(shape.omitted).toEqual(option.firstLine === undefined || omittedCount === 0 ? undefined : { fromLine: option.firstLine, count: omittedCount })
    })
  })
})

describe('shapeOutput property inputs', () => {
  it('reach every way of shaping, so that no property above holds only vacuously', () => {
    const seen = new Set<string>()
    for (const { text, option } of fc.sample(shaped, { numRuns: 400, seed: 42 })) {
      const shape = shapeOutput(text, option)
      const { elision, tail } = shapedParts(shape)
      if (!shape.truncated) seen.add(shape.foldedLines ? 'folded' : 'as is')
      else if (!elision) seen.add('tail only')
      else {
        seen.add(ELISION_LINE.exec(elision)![3] ? 'elided with call' : 'elided')
        if (tail.at(-1) !== text.split('\n').at(-1)) seen.add('last line cut')
        if (shape.foldedLines) seen.add('elided and folded')
      }
    }
    expect([...seen].sort()).toEqual(['as is', 'elided', 'elided and folded', 'elided with call', 'folded', 'last line cut', 'tail only'])
  })

  it('one FoldedOutput shaped at several budgets gives what shapeOutput gives at each', () => {
    fc.assert(
      fc.property(outputText, fc.boolean(), fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 4 }), (text, foldRepeats, budgets) => {
        const folded = new FoldedOutput(text, { foldRepeats })
        for (const maxBytes of budgets) {
          const window = { maxBytes, firstLine: 7, readCall: terminalRead }
          expect(folded.shape(window)).toEqual(shapeOutput(text, { ...window, foldRepeats }))
        }
      }),
      { numRuns: 200 },
    )
  })
})
