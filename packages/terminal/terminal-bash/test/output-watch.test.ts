import { Buffer } from 'node:buffer'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Emulator } from '../src/screen/emulator'
import { OutputWatch } from '../src/screen/output-watch'

// The watch decides when a sleeping screen must parse at once because the program waits for an
// answer. It must never miss one the emulator gives (checked against the emulator itself), and it
// must stay quiet on the output that makes up a shell session (else the screen never sleeps).

/** Every query the emulator answers, 7-bit. */
const QUERIES: Readonly<Record<string, string>> = {
  'DA1 (CSI c)': '\x1b[c',
  'DA1 with 0': '\x1b[0c',
  'DA2 (CSI > c)': '\x1b[>c',
  'DSR status (CSI 5 n)': '\x1b[5n',
  'CPR (CSI 6 n)': '\x1b[6n',
  'DECXCPR (CSI ? 6 n)': '\x1b[?6n',
  'DECRQM ANSI (CSI 4 $ p)': '\x1b[4$p',
  'DECRQM DEC (CSI ? 2004 $ p)': '\x1b[?2004$p',
  'size in characters (CSI 18 t)': '\x1b[18t',
  'DECRQSS (DCS $ q m ST)': '\x1bP$qm\x1b\\',
  'foreground colour (OSC 10 ; ? BEL)': '\x1b]10;?\x07',
  'background colour (OSC 11 ; ? ST)': '\x1b]11;?\x1b\\',
}

/** The same queries with their opener as a UTF-8 encoded C1 control, as xterm also decodes them. */
const C1_QUERIES: Readonly<Record<string, string>> = {
  'CPR after C1 CSI': '\u009b6n',
  'DA1 after C1 CSI': '\u009bc',
  'colour after C1 OSC, ended by C1 ST': '\u009d11;?\u009c',
  'DECRQSS after C1 DCS': '\u0090$qm\u009c',
}

/** What a shell session prints all day: none of it may wake the screen. */
const QUIET: Readonly<Record<string, string>> = {
  'plain lines': 'total 12\r\ndrwxr-xr-x 2 root root 4096 Dec  3 12:00 .\r\n',
  'coloured ls': '\x1b[0m\x1b[01;34mbin\x1b[0m  \x1b[01;32mrun.sh\x1b[0m\r\n',
  'the prompt marker and bracketed paste': '\x1b]133;D;12345\x07dsh> \x1b[?2004h',
  'a title': '\x1b]0;root@host: ~\x07',
  'cursor moves and erases': '\x1b[2K\r\x1b[1A\x1b[3;4H\x1b[J\x1b[K',
  'a charset designation and keypad modes': '\x1b(B\x1b=\x1b>',
  'UTF-8 text with C2 bytes that are not controls': 'caf\u00e9 \u00a0\u00b0 \u00a9 \u4e2d\u6587\r\n',
  'a progress bar': '\r[=====     ] 50%\x1b[K',
}

function bytes(text: string): Buffer {
  return Buffer.from(text, 'utf8')
}

describe('the output watch: queries', () => {
  for (const [name, query] of Object.entries({ ...QUERIES, ...C1_QUERIES })) {
    it(`flags ${name}, whole and split at every byte`, () => {
      const whole = bytes(`before ${query} after`)
      expect(new OutputWatch().scan(whole)).toBe(true)
      for (let cut = 1; cut < whole.length; cut++) {
        const watch = new OutputWatch()
        const first = watch.scan(whole.subarray(0, cut))
        const second = watch.scan(whole.subarray(cut))
        expect(first || second, `split at ${cut}`).toBe(true)
      }
    })
  }

  for (const [name, output] of Object.entries(QUIET)) {
    it(`stays quiet on ${name}`, () => {
      const watch = new OutputWatch()
      expect(watch.scan(bytes(output))).toBe(false)
      // Also as the next chunk: no state is left over that would misread plain text.
      expect(watch.scan(bytes('plain c n p t text\r\n'))).toBe(false)
    })
  }

  it('ends a sequence where the emulator does: CAN aborts a CSI, and a final after it is text', () => {
    const watch = new OutputWatch()
    expect(watch.scan(bytes('\x1b[6\x18n and c'))).toBe(false)
  })

  it('takes a raw 0x9B byte as text, as xterm does (only the UTF-8 encoded C1 opens a CSI)', () => {
    expect(new OutputWatch().scan(Buffer.from([0x9b, 0x36, 0x6e]))).toBe(false)
    expect(new OutputWatch().scan(Buffer.from([0xc2, 0x9b, 0x36, 0x6e]))).toBe(true)
  })

  it('misses no answer the emulator gives, on random output in random chunks', async () => {
    await fc.assert(
      fc.asyncProperty(stream, async (chunks) => {
        const answered: number[] = []
        let current = -1
        const emulator = new Emulator({ size: { rows: 10, cols: 40 }, reply: () => answered.push(current) })
        const watch = new OutputWatch()
        const flagged: number[] = []
        for (const [index, chunk] of chunks.entries()) {
          if (watch.scan(chunk)) flagged.push(index)
          current = index
          emulator.write(chunk)
          // Reading the modes parses everything handed over, now: answers land on this chunk.
          void emulator.modes
        }
        await emulator.snapshot()
        emulator.dispose()
        for (const chunk of new Set(answered)) expect(flagged).toContain(chunk)
      }),
      { numRuns: 400 },
    )
  })
})

/** Pieces of output: text, every way into and out of a sequence, the queries and near-misses. */
const PIECES = [
  'text',
  ' c ',
  'n',
  '?',
  '\r\n',
  '\x1b',
  '[',
  ']',
  'P',
  '\\',
  '6',
  ';',
  '$',
  '>',
  '\x07',
  '\x18',
  '\x1a',
  '\x0a',
  '\x1b[',
  '\x1b]',
  '\x1bP',
  '\x1b\\',
  '\x1b(',
  '\u009b',
  '\u009d',
  '\u0090',
  '\u009c',
  '\u0085',
  '\u00e9',
  '\x1b[31m',
  '\x1b]0;title',
  '\x1b]133;D;1\x07',
  ...Object.values(QUERIES),
  ...Object.values(C1_QUERIES),
]

/** `pieces` joined as output, cut at `cuts` (taken modulo its length; cuts may fall inside a UTF-8 character). */
function cutIntoChunks(pieces: readonly string[], cuts: readonly number[]): Buffer[] {
  const all = bytes(pieces.join(''))
  const points = [...new Set(cuts.map((cut) => cut % all.length))].sort((a, b) => a - b)
  const chunks: Buffer[] = []
  let start = 0
  for (const point of [...points, all.length]) {
    if (point > start) chunks.push(all.subarray(start, point))
    start = Math.max(start, point)
  }
  return chunks
}

/** Random output cut into random chunks. */
const stream = fc
  .tuple(fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 40 }), fc.array(fc.nat(), { maxLength: 8 }))
  .map(([pieces, cuts]) => cutIntoChunks(pieces, cuts))

describe('the output watch: settings kept for a restart', () => {
  function settingsAfter(...chunks: string[]) {
    const watch = new OutputWatch()
    for (const chunk of chunks) watch.scan(bytes(chunk))
    return { title: watch.settings.title, preamble: watch.settings.preamble() }
  }

  it('keeps the title of OSC 0 and OSC 2, however the string ends, and not other strings', () => {
    expect(settingsAfter('\x1b]0;first\x07').title).toBe('first')
    expect(settingsAfter('\x1b]2;second\x1b\\').title).toBe('second')
    expect(settingsAfter('\x1b]2;third\u009c').title).toBe('third')
    // ESC ends an OSC string as xterm ends it: the title is set whatever follows.
    expect(settingsAfter('\x1b]2;fourth\x1b[m').title).toBe('fourth')
    expect(settingsAfter('\x1b]2;kept\x07', '\x1b]1;icon\x07\x1b]133;D;0\x07\x1b]22;x\x07\x1b]52;c;QUJD\x07').title).toBe('kept')
    expect(settingsAfter('\x1b]2;kept\x07', '\x1b]2;cancelled\x18').title).toBe('kept')
    expect(settingsAfter('\x1b]2;kept\x07', '\x1b]2;\x07').title).toBeUndefined()
    expect(settingsAfter('\x1b]2;caf\u00e9 \u4e2d\x07').title).toBe('caf\u00e9 \u4e2d')
  })

  it('does not keep a title past its bound (the older one stays)', () => {
    expect(settingsAfter('\x1b]2;short\x07', `\x1b]2;${'T'.repeat(5000)}\x07`).title).toBe('short')
  })

  it('keeps the key modes: DECCKM, the keypad, bracketed paste; RIS and DECSTR reset them', () => {
    expect(settingsAfter('\x1b[?1h\x1b=\x1b[?2004h').preamble).toBe('\x1b[?1h\x1b[?66h\x1b[?2004h')
    expect(settingsAfter('\x1b[?1;2004h').preamble).toBe('\x1b[?1h\x1b[?2004h')
    expect(settingsAfter('\x1b[?1;2004h', '\x1b[?2004l\x1b>').preamble).toBe('\x1b[?1h')
    expect(settingsAfter('\x1b[?66h').preamble).toBe('\x1b[?66h')
    expect(settingsAfter('\x1b[?1h\x1b=', '\x1bc').preamble).toBe('')
    expect(settingsAfter('\x1b[?2004h', '\x1b[!p').preamble).toBe('')
    // Not private, or not h/l: nothing changes.
    expect(settingsAfter('\x1b[1h\x1b[?2004$p\x1b[2004h').preamble).toBe('')
  })

  it('ends in the same settings however the output is split', () => {
    const output = bytes('\x1b]2;a title\x07x\x1b[?1;2004h\x1b=y\x1b[?2004l\x1b]0;new \u00e9\x1b\\')
    const whole = new OutputWatch()
    whole.scan(output)
    for (let cut = 1; cut < output.length; cut++) {
      const split = new OutputWatch()
      split.scan(output.subarray(0, cut))
      split.scan(output.subarray(cut))
      expect({ title: split.settings.title, preamble: split.settings.preamble() }, `split at ${cut}`).toEqual({
        title: whole.settings.title,
        preamble: whole.settings.preamble(),
      })
    }
  })

  it('restores on a new emulator the key modes the old one had, on random output', async () => {
    await fc.assert(
      fc.asyncProperty(modeStream, async (chunks) => {
        const watch = new OutputWatch()
        const seen = new Emulator({ size: { rows: 5, cols: 20 }, reply: () => {} })
        for (const chunk of chunks) {
          watch.scan(chunk)
          seen.write(chunk)
        }
        const restarted = new Emulator({ size: { rows: 5, cols: 20 }, reply: () => {} })
        restarted.write(bytes(watch.settings.preamble()))
        expect(restarted.modes).toEqual(seen.modes)
        expect((await restarted.snapshot()).title).toEqual((await seen.snapshot()).title)
        seen.dispose()
        restarted.dispose()
      }),
      { numRuns: 300 },
    )
  })
})

/** Output that sets and resets modes and titles, among other sequences, in random chunks. */
const modeStream = fc
  .tuple(
    fc.array(
      fc.constantFrom(
        'text ',
        '\r\n',
        '\x1b[?1h',
        '\x1b[?1l',
        '\x1b[?2004h',
        '\x1b[?2004l',
        '\x1b[?1;2004h',
        '\x1b[?66h',
        '\x1b[?66l',
        '\x1b=',
        '\x1b>',
        '\x1bc',
        '\x1b[!p',
        '\x1b[?25l',
        '\x1b[31m',
        '\x1b]2;title one\x07',
        '\x1b]0;title two\x1b\\',
        '\x1b]2;\x07',
        '\x1b]1;icon\x07',
        '\x1b]2;aborted\x18',
        '\x1b[?1',
        'h',
      ),
      { minLength: 1, maxLength: 30 },
    ),
    fc.array(fc.nat(), { maxLength: 6 }),
  )
  .map(([pieces, cuts]) => cutIntoChunks(pieces, cuts))
