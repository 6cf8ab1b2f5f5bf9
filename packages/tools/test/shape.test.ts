import { describe, expect, it } from 'vitest'
import { FoldedOutput, formatByteSize, shapeOutput } from '../src/index'
import { bytes, codePointTail, ELISION_LINE, repeat, shapedParts, terminalRead, unfold } from './shape-reading'

// shapeOutput: a long output becomes a window sized for a model (folds, head, elision line, tail).

/** `seq 1 count` followed by a prompt, as a shell session prints it. */
const seq = (count: number) => `${Array.from({ length: count }, (_, index) => String(index + 1)).join('\n')}\ndsh> `

describe('formatByteSize', () => {
  it('writes bytes below 1 KiB exactly and larger sizes in binary units with one decimal', () => {
    expect(formatByteSize(0)).toBe('0 bytes')
    expect(formatByteSize(1)).toBe('1 byte')
    expect(formatByteSize(512)).toBe('512 bytes')
    expect(formatByteSize(1023)).toBe('1023 bytes')
    expect(formatByteSize(1024)).toBe('1.0 KiB')
    expect(formatByteSize(12_595)).toBe('12.3 KiB')
    expect(formatByteSize(1_887_437)).toBe('1.8 MiB')
    expect(formatByteSize(3 * 1024 ** 3)).toBe('3.0 GiB')
  })

  it('moves up a unit when rounding reaches 1024', () => {
    expect(formatByteSize(1024 * 1024 - 20)).toBe('1.0 MiB')
    expect(formatByteSize(1024 * 1024 - 60)).toBe('1023.9 KiB')
  })

  it('refuses sizes that are not byte counts', () => {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => formatByteSize(bad)).toThrow(RangeError)
  })
})

describe('shapeOutput within budget', () => {
  it('folds repeats in a text that fits too (nothing is lost), and leaves it as it is without folding', () => {
    const text = [...repeat('x'.repeat(40), 5), 'dsh> '].join('\n')
    expect(shapeOutput(text, { maxBytes: bytes(text) })).toEqual({
      text: `${'x'.repeat(40)}\n[… 4 more identical lines]\ndsh> `,
      lines: 6,
      bytes: 210,
      shownBytes: 75,
      omittedLines: 0,
      omittedBytes: 0,
      foldedLines: 4,
      truncated: false,
    })
    expect(shapeOutput(text, { maxBytes: bytes(text), foldRepeats: false })).toEqual({
      text,
      lines: 6,
      bytes: 210,
      shownBytes: 210,
      omittedLines: 0,
      omittedBytes: 0,
      foldedLines: 0,
      truncated: false,
    })
  })

  it('counts lines the way split does: a trailing newline leaves an empty last line', () => {
    expect(shapeOutput('', { maxBytes: 0 })).toMatchObject({ text: '', lines: 1, bytes: 0, truncated: false })
    expect(shapeOutput('a\nb\n', { maxBytes: 10 })).toMatchObject({ lines: 3, bytes: 4 })
  })

  it('refuses a budget that is negative or not finite, and a first line that is not a line number', () => {
    for (const maxBytes of [-1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => shapeOutput('x', { maxBytes })).toThrow(RangeError)
    for (const firstLine of [-1, 1.5]) expect(() => shapeOutput('x', { maxBytes: 10, firstLine })).toThrow(RangeError)
  })

  it('rounds a fractional budget down', () => {
    expect(shapeOutput('abc', { maxBytes: 2.9 }).text).toBe('bc')
  })
})

describe('shapeOutput folds', () => {
  const long = 'x'.repeat(40)

  it('folds a run into the line and an exact count, plural and singular', () => {
    const text = [...repeat(long, 1000), 'end', 'dsh> '].join('\n')
    expect(shapeOutput(text, { maxBytes: 100 })).toEqual({
      text: `${long}\n[… 999 more identical lines]\nend\ndsh> `,
      lines: 1002,
      bytes: 41_009,
      shownBytes: 81,
      omittedLines: 0,
      omittedBytes: 0,
      foldedLines: 999,
      truncated: false,
    })
    const pair = [long, long, 'dsh> '].join('\n')
    expect(shapeOutput(pair, { maxBytes: 80 }).text).toBe(`${long}\n[… 1 more identical line]\ndsh> `)
  })

  it('never folds different lines together and counts each run on its own', () => {
    const other = 'y'.repeat(40)
    const text = [...repeat(long, 3), ...repeat(other, 2), long, 'dsh> '].join('\n')
    const shape = shapeOutput(text, { maxBytes: 200 })
    expect(shape.text).toBe(`${long}\n[… 2 more identical lines]\n${other}\n[… 1 more identical line]\n${long}\ndsh> `)
    expect(shape.foldedLines).toBe(3)
  })

  it('folds only when the fold line makes the run shorter', () => {
    // A pair folds from 28 bytes per line: 28 + 1 + 27 < 2·28 + 1. Each budget is one byte short of the input.
    const pairOf = (line: string) => [line, line, 'z'.repeat(100), 'dsh> '].join('\n')
    expect(shapeOutput(pairOf('a'.repeat(28)), { maxBytes: 163 }).text).toBe(['a'.repeat(28), '[… 1 more identical line]', 'z'.repeat(100), 'dsh> '].join('\n'))
    const notFolded = shapeOutput(pairOf('a'.repeat(27)), { maxBytes: 161 })
    expect(notFolded.text).toBe(['a'.repeat(27), 'a'.repeat(27), '[… 1 line (101 bytes) left out]', 'dsh> '].join('\n'))
    expect(notFolded.foldedLines).toBe(0)
    expect(shapeOutput(pairOf('ok'), { maxBytes: 111 }).text).toMatch(/^ok\nok\n\[… 1 line/)
  })

  it('leaves runs of blank lines as they are, up to the 31 lines where a fold line would not be shorter', () => {
    const around = (blanks: number) => ['start', ...repeat('', blanks), ...repeat(long, 10), 'dsh> '].join('\n')
    expect(shapeOutput(around(31), { maxBytes: 150 }).text).toBe(['start', ...repeat('', 31), long, '[… 9 more identical lines]', 'dsh> '].join('\n'))
    expect(shapeOutput(around(2), { maxBytes: 150 }).text).toBe(['start', '', '', long, '[… 9 more identical lines]', 'dsh> '].join('\n'))
    // 32 blank lines take 31 bytes; a blank line and its fold line take 30.
    expect(shapeOutput(around(32), { maxBytes: 150 }).text).toBe(
      ['start', '', '[… 31 more identical lines]', long, '[… 9 more identical lines]', 'dsh> '].join('\n'),
    )
  })

  it('never folds the last line into the run above it', () => {
    const text = repeat(long, 5).join('\n')
    expect(shapeOutput(text, { maxBytes: 150 }).text).toBe(`${long}\n[… 3 more identical lines]\n${long}`)
  })

  it('does not fold with foldRepeats false', () => {
    const text = [...repeat(long, 10), 'dsh> '].join('\n')
    const shape = shapeOutput(text, { maxBytes: 200, foldRepeats: false })
    expect(shape.text).toBe([long, '[… 7 lines (287 bytes) left out]', long, long, 'dsh> '].join('\n'))
    expect(shape.foldedLines).toBe(0)
    expect(shape.truncated).toBe(true)
  })
})

describe('shapeOutput head and tail', () => {
  it('keeps whole head lines, one elision line quoting the read call, and a tail ending with the prompt', () => {
    const text = seq(300_000)
    const shape = shapeOutput(text, { maxBytes: 200, firstLine: 1, readCall: terminalRead })
    expect(shape.text).toBe(
      [
        ...'1 2 3 4 5 6 7 8 9 10 11 12'.split(' '),
        '[… 299981 lines (1.9 MiB) left out; terminal_read {"sessionId":"pty-1","fromLine":13,"count":299981} returns them]',
        ...'299994 299995 299996 299997 299998 299999 300000'.split(' '),
        'dsh> ',
      ].join('\n'),
    )
    expect(shape).toMatchObject({ lines: 300_001, bytes: 1_988_900, shownBytes: 198, omittedLines: 299_981, foldedLines: 0, truncated: true })
    expect(shape.omitted).toEqual({ fromLine: 13, count: 299_981 })
    // Lines 13 … 299993 are 2 + 7·3 + 90·4 + 900·5 + 9000·6 + 289994·7 bytes with their newlines.
    expect(shape.omittedBytes).toBe(1_988_819)
  })

  it('writes the elision line without a call when no readCall or no firstLine is given', () => {
    const plain = shapeOutput(seq(300_000), { maxBytes: 100 })
    expect(plain.text).toBe(
      [...'1 2 3 4 5 6 7 8 9 10'.split(' '), '[… 299985 lines (1.9 MiB) left out]', ...'299996 299997 299998 299999 300000'.split(' '), 'dsh> '].join('\n'),
    )
    expect(plain.omitted).toBeUndefined()
    expect(shapeOutput(seq(300_000), { maxBytes: 100, readCall: terminalRead })).toEqual(plain)
    expect(shapeOutput(seq(300_000), { maxBytes: 100, firstLine: 1 })).toEqual({ ...plain, omitted: { fromLine: 11, count: 299_985 } })
  })

  it('names the read call only for left-out lines still kept (oldestLine)', () => {
    const text = seq(300_000)
    // The source keeps the last 10 000 lines: 290 001 on.
    const partly = shapeOutput(text, { maxBytes: 240, firstLine: 1, readCall: terminalRead, oldestLine: 290_001 })
    const elision = partly.text.split('\n').find((line) => line.startsWith('[…'))
    expect(elision).toMatch(/^\[… (\d+) lines \(1\.9 MiB\) left out; the first (\d+) are no longer kept; /)
    const [, count, gone] = elision!.match(/^\[… (\d+) lines .*the first (\d+) are/)!
    expect(Number(gone)).toBe(290_001 - partly.omitted!.fromLine)
    expect(elision).toContain(
      `terminal_read {"sessionId":"pty-1","fromLine":290001,"count":${Number(count) - Number(gone)}} returns the last ${Number(count) - Number(gone)}]`,
    )
    // Every left-out line gone: no call at all, and where the kept lines begin.
    const none = shapeOutput(text, { maxBytes: 240, firstLine: 1, readCall: terminalRead, oldestLine: 299_999 })
    expect(none.text).toContain('left out; no longer kept (the session keeps lines from 299999 on)]')
    expect(none.text).not.toContain('terminal_read')
    // Nothing dropped yet: the call as before.
    expect(shapeOutput(text, { maxBytes: 240, firstLine: 1, readCall: terminalRead, oldestLine: 1 })).toEqual(
      shapeOutput(text, { maxBytes: 240, firstLine: 1, readCall: terminalRead }),
    )
    // Without oldestLine no line is gone, whatever number the text starts at (a property-test counterexample: 0).
    const lines = Array.from({ length: 300 }, (_, index) => `line ${index + 1}`).join('\n')
    const fromZero = shapeOutput(lines, { maxBytes: 120, firstLine: 0, readCall: terminalRead })
    expect(fromZero.text).toBe('[… 299 lines (2.5 KiB) left out; terminal_read {"sessionId":"pty-1","fromLine":0,"count":299} returns them]\nline 300')
  })

  it('passes the absolute range to readCall and says "it" for one line', () => {
    const calls: [number, number][] = []
    const text = ['first', 'x'.repeat(200), 'dsh> '].join('\n')
    const shape = shapeOutput(text, {
      maxBytes: 120,
      firstLine: 500,
      readCall: (fromLine, count) => (calls.push([fromLine, count]), terminalRead(fromLine, count)),
    })
    expect(shape.text).toBe('first\n[… 1 line (201 bytes) left out; terminal_read {"sessionId":"pty-1","fromLine":501,"count":1} returns it]\ndsh> ')
    expect(calls.at(-1)).toEqual([501, 1])
    expect(shape.omitted).toEqual({ fromLine: 501, count: 1 })
  })

  it('keeps the summary at the end of a failing test run', () => {
    const run = [
      '',
      ' RUN  v4.1.12 /work/app',
      '',
      ...Array.from({ length: 400 }, (_, index) => ` ✓ test/unit-${index}.test.ts (12 tests) ${(index % 7) + 3}ms`),
      ' ❯ test/shape.test.ts (3 tests | 1 failed) 9ms',
      '   × cuts the last line 4ms',
      '     → expected 1 to be 2',
      '',
      ' Test Files  1 failed | 400 passed (401)',
      '      Tests  1 failed | 4800 passed (4801)',
      '   Duration  12.34s',
      '',
      'dsh> ',
    ].join('\n')
    const shape = shapeOutput(run, { maxBytes: 600, firstLine: 1000, readCall: terminalRead })
    expect(shape.text).toBe(
      [
        '',
        ' RUN  v4.1.12 /work/app',
        '',
        ' ✓ test/unit-0.test.ts (12 tests) 3ms',
        ' ✓ test/unit-1.test.ts (12 tests) 4ms',
        ' ✓ test/unit-2.test.ts (12 tests) 5ms',
        '[… 395 lines (16.1 KiB) left out; terminal_read {"sessionId":"pty-1","fromLine":1006,"count":395} returns them]',
        ' ✓ test/unit-398.test.ts (12 tests) 9ms',
        ' ✓ test/unit-399.test.ts (12 tests) 3ms',
        ' ❯ test/shape.test.ts (3 tests | 1 failed) 9ms',
        '   × cuts the last line 4ms',
        '     → expected 1 to be 2',
        '',
        ' Test Files  1 failed | 400 passed (401)',
        '      Tests  1 failed | 4800 passed (4801)',
        '   Duration  12.34s',
        '',
        'dsh> ',
      ].join('\n'),
    )
    expect(shape).toMatchObject({ lines: 412, omittedLines: 395, omitted: { fromLine: 1006, count: 395 }, shownBytes: 561 })
  })

  it('keeps the error count at the end of compiler output', () => {
    const error = (index: number) => `src/module-${index % 30}.ts(${index + 10},5): error TS2322: Type 'string' is not assignable to type 'number'.`
    const output = [...Array.from({ length: 150 }, (_, index) => error(index)), '', 'Found 150 errors in 30 files.', '', 'dsh> '].join('\n')
    expect(shapeOutput(output, { maxBytes: 500 }).text).toBe(
      [error(0), '[… 146 lines (12.6 KiB) left out]', error(147), error(148), error(149), '', 'Found 150 errors in 30 files.', '', 'dsh> '].join('\n'),
    )
  })

  it('leaves out a first line longer than the head share and gives its budget to the tail', () => {
    const text = ['h'.repeat(100), ...Array.from({ length: 60 }, (_, index) => `line ${index}`), 'dsh> '].join('\n')
    const shape = shapeOutput(text, { maxBytes: 150 })
    const lines = Array.from({ length: 13 }, (_, index) => `line ${index + 47}`)
    expect(shape.text).toBe(['[… 48 lines (467 bytes) left out]', ...lines, 'dsh> '].join('\n'))
    // The tail took 111 bytes of the 116 after the elision line: more than its two thirds.
    expect(bytes(lines.join('\n'))).toBeGreaterThan((2 * (150 - 34)) / 3)
  })

  it('gives the head what the tail cannot use', () => {
    const text = [...Array.from({ length: 60 }, (_, index) => `line ${index}`), 'T'.repeat(90), 'dsh> '].join('\n')
    const lines = Array.from({ length: 14 }, (_, index) => `line ${index}`)
    expect(shapeOutput(text, { maxBytes: 150 }).text).toBe([...lines, '[… 47 lines (459 bytes) left out]', 'dsh> '].join('\n'))
  })

  it('cuts a last line longer than the tail budget to its own tail, the only tail line', () => {
    const text = ['first', 'second', 'third', `${'z'.repeat(1000)}END`].join('\n')
    const shape = shapeOutput(text, { maxBytes: 100 })
    expect(shape.text).toBe(`first\nsecond\n[… 1 line (6 bytes) left out]\n${'z'.repeat(52)}END`)
    // Lost: "third" and its newline, and 948 bytes cut from the last line; the cut line counts as shown.
    expect(shape).toMatchObject({ shownBytes: 100, omittedLines: 1, omittedBytes: 6 + 948, truncated: true })
  })

  it('elides whole lines only, a fold inside the range standing for all its lines', () => {
    const warning = 'warning: unused variable `x` in src/lib.rs'
    const retry = 'retrying connection to 10.0.0.1:5432 …'
    const lines = ['compiling', ...repeat(warning, 30), ...Array.from({ length: 40 }, (_, index) => `step ${index}`), ...repeat(retry, 12), 'done', 'dsh> ']
    const text = lines.join('\n')
    let elided = 0
    let plainOnly = 0
    for (let maxBytes = 0; maxBytes <= bytes(text); maxBytes++) {
      const shape = shapeOutput(text, { maxBytes, firstLine: 7, readCall: terminalRead })
      const { head, elision, tail } = shapedParts(shape)
      if (!elision) continue
      elided++
      const { fromLine, count } = shape.omitted!
      // The tail never starts with a fold line (unfold would throw), and the last line may be cut to its tail.
      const shownTail = unfold(tail)
      const lastShown = shownTail.pop()!
      expect(lines.at(-1)!.endsWith(lastShown)).toBe(true)
      expect([...unfold(head), ...lines.slice(fromLine - 7, fromLine - 7 + count), ...shownTail, lines.at(-1)].join('\n')).toBe(text)
      // The line states the same range; small budgets drop the call.
      const [, stated, size, call] = ELISION_LINE.exec(elision)!
      expect(Number(stated)).toBe(count)
      expect(size).toBe(formatByteSize(bytes(lines.slice(fromLine - 7, fromLine - 7 + count).join('\n')) + 1))
      if (call !== undefined) expect(call).toBe(terminalRead(fromLine, count))
      else plainOnly++
    }
    expect(elided).toBeGreaterThan(300)
    expect(plainOnly).toBeLessThan(elided)
  })
})

describe('shapeOutput with wide, astral and combining characters', () => {
  const samples = { cjk: '漢字テスト', emoji: '😀👍🏽🎉', combining: 'e\u0301a\u0301' }

  for (const [name, sample] of Object.entries(samples)) {
    it(`never splits a code point at any budget (${name})`, () => {
      const last = sample.repeat(8)
      const lines = [...Array.from({ length: 12 }, (_, index) => `${index} ${sample.repeat(index % 4)}`), last]
      const text = lines.join('\n')
      for (let maxBytes = 0; maxBytes <= bytes(text) + 2; maxBytes++) {
        const shape = shapeOutput(text, { maxBytes, firstLine: 0, readCall: terminalRead })
        expect(bytes(shape.text)).toBeLessThanOrEqual(maxBytes)
        expect(shape.shownBytes).toBe(bytes(shape.text))
        expect(Buffer.from(shape.text).toString()).toBe(shape.text)
        expect(shape.text).not.toContain('\uFFFD')
        const shownLast = shape.text.split('\n').at(-1)!
        // Whatever the window, its last line is a code-point suffix of the input's last line.
        expect(shownLast).toBe(codePointTail(last, bytes(shownLast)))
      }
    })

    it(`keeps the longest code-point tail of a single line (${name})`, () => {
      const line = sample.repeat(10)
      for (let maxBytes = 0; maxBytes <= bytes(line); maxBytes++) {
        const shape = shapeOutput(line, { maxBytes })
        expect(shape.text).toBe(codePointTail(line, maxBytes))
        expect(shape).toMatchObject({ lines: 1, omittedLines: shape.text ? 0 : 1, omittedBytes: bytes(line) - bytes(shape.text) })
        expect(shape.truncated).toBe(maxBytes < bytes(line))
      }
    })
  }

  it('cuts between a letter and its combining accent when only the accent fits', () => {
    // Boundaries are code points, not graphemes: U+0301 alone is 2 bytes.
    expect(shapeOutput('e\u0301', { maxBytes: 2 }).text).toBe('\u0301')
  })
})

describe('shapeOutput with tiny budgets', () => {
  it('drops the call from the elision line when only the plain line fits', () => {
    expect(shapeOutput(seq(300_000), { maxBytes: 60, firstLine: 1, readCall: terminalRead }).text).toBe(
      ['1', '2', '3', '4', '5', '[… 299994 lines (1.9 MiB) left out]', '300000', 'dsh> '].join('\n'),
    )
  })

  it('returns the tail of the text cut to the budget when no elision line fits', () => {
    const shape = shapeOutput(seq(300_000), { maxBytes: 10, firstLine: 1, readCall: terminalRead })
    expect(shape).toMatchObject({ text: '0000\ndsh> ', shownBytes: 10, omittedLines: 299_999, omittedBytes: 1_988_890, truncated: true })
    expect(shape.omitted).toEqual({ fromLine: 1, count: 299_999 })
  })

  it('shows nothing for a zero budget, and counts an empty last line as shown', () => {
    expect(shapeOutput('abc\ndef', { maxBytes: 0 })).toMatchObject({ text: '', omittedLines: 2, omittedBytes: 7, truncated: true })
    expect(shapeOutput('abc\n', { maxBytes: 0 })).toMatchObject({ text: '', omittedLines: 1, omittedBytes: 4, truncated: true })
    expect(shapeOutput('abc\n', { maxBytes: 1 })).toMatchObject({ text: '\n', omittedLines: 1, omittedBytes: 3 })
  })

  it('shapes a few MiB to one elision (its speed is a bench row: pnpm bench results)', () => {
    const text = Array.from({ length: 200_000 }, (_, index) => `${index} ${'#'.repeat(index % 40)}`).join('\n')
    const shape = shapeOutput(text, { maxBytes: 8192, firstLine: 1, readCall: terminalRead })
    expect(shape.text.split('\n').filter((line) => ELISION_LINE.test(line))).toHaveLength(1)
  })
})

describe('FoldedOutput of a short output (at most two lines)', () => {
  it('shows a short output that fits as it is, counted exactly, and still elides or cuts one that does not', () => {
    for (const text of ['', 'dsh> ', 'true\ndsh> ', 'héllo 😀\n', '\n']) {
      const folded = new FoldedOutput(text, { foldRepeats: true })
      expect(folded.foldedBytes).toBe(bytes(text))
      expect(folded.shape({ maxBytes: 16_384 })).toEqual({
        text,
        lines: text.split('\n').length,
        bytes: bytes(text),
        shownBytes: bytes(text),
        omittedLines: 0,
        omittedBytes: 0,
        foldedLines: 0,
        truncated: false,
      })
    }
    // Over the budget the short text takes the same way as any other: here its tail, cut on a code point.
    const cut = new FoldedOutput('true\nhéllo wörld', { foldRepeats: true }).shape({ maxBytes: 6 })
    expect(cut).toEqual(shapeOutput('true\nhéllo wörld', { maxBytes: 6 }))
    expect(cut.truncated).toBe(true)
    expect(bytes(cut.text)).toBeLessThanOrEqual(6)
  })
})
