import { describe, expect, it } from 'vitest'
import { TerminalSanitizer } from '../src/output'
import { ROW_CELLS } from '../src/output/line'
import { clean, raw, render, utf8 } from './helpers'

/** Every way to cut `text` into two chunks must render like the whole. */
function expectSplitInvariant(text: string | Uint8Array): void {
  const bytes = typeof text === 'string' ? raw(text) : text
  const whole = render([bytes])
  for (let cut = 0; cut <= bytes.length; cut++) {
    expect(render([bytes.subarray(0, cut), bytes.subarray(cut)]), `cut at ${cut}`).toEqual(whole)
  }
  expect(render([...bytes].map((byte) => Uint8Array.of(byte))), 'byte by byte').toEqual(whole)
}

describe('TerminalSanitizer: lines and carriage returns', () => {
  it('passes plain text and completes lines on LF', () => {
    expect(clean('hello\nworld\n')).toBe('hello\nworld\n')
    expect(clean('no newline')).toBe('no newline')
  })

  it('turns CRLF into one newline, also when split between chunks', () => {
    expect(clean('a\r\nb\r\n')).toBe('a\nb\n')
    expect(render(['a\r', '\nb\r', '\n']).text).toBe('a\nb\n')
    expectSplitInvariant('one\r\ntwo\r\n\r\nthree')
  })

  it('collapses a progress bar to its final frame', () => {
    expect(clean('10%\r20%\r100%\n')).toBe('100%\n')
    expect(render(['10%\r', '20%\r', '100%', '\n']).text).toBe('100%\n')
  })

  it('lets a shorter rewrite after CR overwrite only the prefix, like a terminal', () => {
    expect(clean('abcdef\rXY\n')).toBe('XYcdef\n')
  })

  it('keeps a line whose CR is never followed by text', () => {
    expect(clean('done\r')).toBe('done')
    expect(clean('done\r\r\n')).toBe('done\n')
  })

  it('treats VT, FF and ESC E as line feeds', () => {
    expect(clean('a\x0bb\x0cc\x1bEd')).toBe('a\nb\nc\nd')
  })

  it('keeps TAB as a character', () => {
    expect(clean('a\tb\n')).toBe('a\tb\n')
  })
})

describe('TerminalSanitizer: backspace and line editing', () => {
  it('moves the cursor left without erasing, also at the end of the line', () => {
    expect(clean('abc\b\n')).toBe('abc\n')
    expect(clean('abcdef\b\b\b\n')).toBe('abcdef\n')
    expect(clean('abc\b\bX\n')).toBe('aXc\n')
  })

  it('renders readline and tty erase echo (`\\b \\b`)', () => {
    expect(clean('dsh> ab\b \b\b \bcat\r\n')).toBe('dsh> cat\n')
    expect(clean('x\b \by\r\n')).toBe('y\n')
  })

  it('ignores backspace at column 0 and never crosses into the previous line', () => {
    expect(clean('one\n\b\btwo')).toBe('one\ntwo')
  })

  it('moves left without erasing inside a line being rewritten', () => {
    expect(clean('abcd\rxy\bZ\n')).toBe('xZcd\n')
  })

  it('overwrites a surrogate pair as one character; an emoji takes two columns', () => {
    expect(render([utf8('a😀'), raw('\b\b!')]).text).toBe('a!')
    expect(render([utf8('aé'), raw('\b!')]).text).toBe('a!')
  })

  it('applies CSI K (erase to end and whole line)', () => {
    expect(clean('abcdef\r\x1b[KXY\n')).toBe('XY\n')
    expect(clean('abcdef\r\x1b[0KXY\n')).toBe('XY\n')
    // EL 2 and EL 1 leave the cursor where it was: text written next follows blanks.
    expect(clean('abcdef\x1b[2Kxy\n')).toBe('      xy\n')
    expect(clean('abcdef\x1b[2K\n')).toBe('\n')
    expect(clean('abcdef\r\x1b[1Kxy\n')).toBe('xycdef\n')
    expect(clean('abcdef\x1b[3G\x1b[1K\n')).toBe('   def\n')
    expect(clean('abc\x1b[1K\n')).toBe('\n')
  })

  it('applies CSI G, C and D; a move past the end writes nothing, text written there follows blanks', () => {
    expect(clean('abcdef\x1b[3GX\n')).toBe('abXdef\n')
    expect(clean('abcdef\x1b[GX\n')).toBe('Xbcdef\n')
    expect(clean('abcdef\x1b[1GX\x1b[2CY\n')).toBe('XbcYef\n')
    expect(clean('abcdef\x1b[2DX\n')).toBe('abcdXf\n')
    expect(clean('abc\x1b[9CX\n')).toBe('abc         X\n')
    expect(clean('ab\x1b[5Gc\n')).toBe('ab  c\n')
    expect(clean('abc\x1b[9C\n')).toBe('abc\n')
    expect(clean('abc\x1b[99DX\n')).toBe('Xbc\n')
    // A move past the end is bounded by the widest row (here on a line being edited, too).
    expect(clean('abc\x1b[999999CX\n')).toBe(`abc${' '.repeat(ROW_CELLS)}X\n`)
    expect(clean('abc\rz\x1b[999999CX\n')).toBe(`zbc${' '.repeat(ROW_CELLS)}X\n`)
  })

  it('renders an npm-style spinner line to its last state', () => {
    const frames = '\x1b[1G\x1b[0K⠋ installing\x1b[1G\x1b[0K⠙ installing\x1b[1G\x1b[0Kadded 3 packages\n'
    expect(render([utf8(frames)]).text).toBe('added 3 packages\n')
  })
})

describe('TerminalSanitizer: control sequences', () => {
  it('strips SGR and other CSI sequences with params, private markers and intermediates', () => {
    expect(clean('\x1b[31mred\x1b[0m \x1b[1;38;5;196mbold\x1b[m\n')).toBe('red bold\n')
    expect(clean('\x1b[?25l\x1b[?2004h\x1b[>0c\x1b[ q\x1b[!pok\n')).toBe('ok\n')
    // Rows are not lines: moving to another row leaves the text on the one line; CUP's column counts.
    expect(clean('ab\x1b[5Ac\x1b[2Bd\n')).toBe('abcd\n')
    expect(clean('a\x1b[2Jb\x1b[Hc\x1b[5Ad\n')).toBe('cd\n')
  })

  it('strips 8-bit CSI (0x9B)', () => {
    expect(clean('a\x9b31mb\x9b0mc')).toBe('abc')
  })

  it('strips OSC ended by BEL or by ESC \\', () => {
    expect(clean('\x1b]0;window title\x07ok')).toBe('ok')
    expect(clean('\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\\n')).toBe('link\n')
  })

  it('keeps a UTF-8 OSC payload whole even when it contains byte 0x9C', () => {
    // U+05DC (ל) is D7 9C: the 0x9C is payload, not an 8-bit string terminator.
    const bytes = Buffer.concat([raw('\x1b]0;'), utf8('שלום'), raw('\x07after')])
    expect(render([bytes]).text).toBe('after')
  })

  it('strips DCS, SOS, PM and APC strings, payload included', () => {
    expect(clean('a\x1bPq#0;2;0;0;0#1~~@@vv\x1b\\b')).toBe('ab')
    expect(clean('a\x1bXsos payload\x1b\\b')).toBe('ab')
    expect(clean('a\x1b^pm payload\x1b\\b')).toBe('ab')
    expect(clean('a\x1b_Gf=100;AAAA\x1b\\b')).toBe('ab')
    expect(clean('a\x1b_apc ended by bel\x07b')).toBe('ab')
  })

  it('strips charset designations without leaving a stray byte', () => {
    expect(clean('\x1b(Bplain\x1b)0\x1b*A\x1b+B\x1b#8\x1b%G!')).toBe('plain!')
  })

  it('strips two-byte escape sequences', () => {
    expect(clean('\x1b7a\x1b8b\x1b=c\x1b>d\x1bce\x1bMf\x1bDg\x1b\\h')).toBe('abcdefgh')
  })

  it('drops BEL, NUL, DEL and other C0 controls', () => {
    expect(clean('a\x07b\x00c\x7fd\x0ee\x0ff\x01g\x1ch')).toBe('abcdefgh')
  })

  it('drops raw C1 bytes other than CSI instead of opening strings with them', () => {
    expect(clean('a\x9dtitle\x9cb\x90c\x85d\x84e')).toBe('atitlebcde')
  })

  it('drops C1 code points that arrive encoded in UTF-8, without interpreting them', () => {
    expect(clean('a\xc2\x9b31mb\xc2\x85c')).toBe('a31mbc')
  })

  it('aborts sequences on CAN and SUB', () => {
    expect(clean('a\x1b[12\x18b')).toBe('ab')
    expect(clean('a\x1b]0;title\x1ab')).toBe('ab')
    expect(clean('a\x1b\x18b')).toBe('ab')
  })

  it('lets ESC inside a string abort it and start the next sequence', () => {
    const out = render(['\x1b]0;never ended\x1b]133;D;7\x07dsh> '])
    expect(out.text).toBe('dsh> ')
    expect(out.markers).toEqual([{ line: 0, column: 0, kind: 'prompt', status: 7 }])
    expect(clean('\x1b]0;t\x1b[31mred')).toBe('red')
  })

  it('executes C0 controls met inside CSI and escape sequences', () => {
    expect(clean('a\x1b[3\n1mb')).toBe('a\nb')
  })

  it('abandons a CSI at a byte that cannot belong to it and renders that byte', () => {
    expect(render([raw('a\x1b[1'), utf8('é'), raw('b')]).text).toBe('aéb')
  })

  it('is split-invariant over every sequence type', () => {
    expectSplitInvariant('\x1b[1;31mred\x1b[0m\r\n\x1b]0;t\x07\x1bP1$r\x1b\\\x1b(B\x9b2K\x1b]133;D;3\x1b\\dsh> ')
  })
})

describe('TerminalSanitizer: UTF-8', () => {
  it('decodes multibyte text, also when every sequence is split', () => {
    const text = 'héllo € 𝄞 😀 漢字\n'
    expect(render([utf8(text)]).text).toBe(text)
    expectSplitInvariant(utf8(text))
  })

  it('keeps a 4-byte emoji cut at a chunk boundary whole', () => {
    const emoji = utf8('😀')
    for (let cut = 1; cut < 4; cut++) {
      expect(render([emoji.subarray(0, cut), emoji.subarray(cut)]).text).toBe('😀')
    }
    expect(render([emoji.subarray(0, 1), emoji.subarray(1, 2), emoji.subarray(2, 3), emoji.subarray(3)]).text).toBe('😀')
  })

  it('replaces invalid sequences with U+FFFD', () => {
    expect(clean('a\xffb')).toBe('a\uFFFDb')
    expect(clean('a\xc0\xafb')).toBe('a\uFFFD\uFFFDb')
    expect(clean('a\xe2\x82b')).toBe('a\uFFFDb')
    expect(clean('a\xf0\x9f\x98b')).toBe('a\uFFFDb')
    expect(clean('a\xa0b')).toBe('a\uFFFDb')
    expect(clean('\xed\xa0\xbf')).toBe('\uFFFD\uFFFD\uFFFD')
    // F4 90 is out of range: U+FFFD for F4, then 90 80 80 are stray C1 bytes, which vanish.
    expect(clean('\xf4\x90\x80\x80')).toBe('\uFFFD')
    expect(clean('\xe0\xa0\x80')).toBe('\u0800')
  })

  it('replaces a sequence broken by a control and then runs the control', () => {
    expect(clean('\xe2\x82\nx')).toBe('\uFFFD\nx')
    expect(clean('\xe2\x1b[31mx')).toBe('\uFFFDx')
  })

  it('flushes an incomplete sequence as U+FFFD at the end of the stream', () => {
    const sanitizer = new TerminalSanitizer()
    sanitizer.write(raw('ok\xe2\x82'))
    expect(sanitizer.line.text()).toBe('ok')
    sanitizer.end()
    expect(sanitizer.line.text()).toBe('ok\uFFFD')
  })
})

describe('TerminalSanitizer: prompt markers', () => {
  it('reports OSC 133;D with its exit status and rendered position', () => {
    const out = render(['out\n\x1b]133;D;0\x07dsh> ', 'false\r\n\x1b]133;D;1\x07dsh> '])
    expect(out.text).toBe('out\ndsh> false\ndsh> ')
    expect(out.markers).toEqual([
      { line: 1, column: 0, kind: 'prompt', status: 0 },
      { line: 2, column: 0, kind: 'prompt', status: 1 },
    ])
  })

  it('locates a marker after output that lacks a trailing newline', () => {
    expect(render(['abc\x1b]133;D;0\x07dsh> ']).markers).toEqual([{ line: 0, column: 3, kind: 'prompt', status: 0 }])
  })

  it('accepts ST, a missing status and extra fields; rejects look-alikes', () => {
    const status = (chunks: string[]) => {
      const [marker] = render(chunks).markers
      return marker?.kind === 'prompt' ? marker.status : undefined
    }
    expect(status(['\x1b]133;D;255\x1b\\'])).toBe(255)
    expect(status(['\x1b]133;D\x07'])).toBeNull()
    expect(status(['\x1b]133;D;x\x07'])).toBeNull()
    expect(status(['\x1b]133;D;2;aid=9\x07'])).toBe(2)
    expect(render(['\x1b]133;A\x07\x1b]133;DD\x07\x1b]1133;D;0\x07\x1b]133;D;0']).markers).toEqual([])
    expect(render(['\x1b]133;D;0\x18']).markers).toEqual([])
  })

  it('finds a marker split at every byte', () => {
    const bytes = raw('x\x1b]133;D;42\x07dsh> ')
    for (let cut = 0; cut <= bytes.length; cut++) {
      expect(render([bytes.subarray(0, cut), bytes.subarray(cut)]).markers).toEqual([{ line: 0, column: 1, kind: 'prompt', status: 42 }])
    }
  })
})

describe('TerminalSanitizer: batching', () => {
  it('renders runs around the batching threshold and beyond the batch capacity the same way', () => {
    for (const length of [1, 47, 48, 49, 4095, 4096, 4097, 10_000]) {
      const text = 'x'.repeat(length)
      expect(render([text + '\n']).text).toBe(text + '\n')
      expect(render([[...text].join('\x1b[m') + '\n']).text).toBe(text + '\n')
    }
  })

  it('renders long stretches of characters decoded one by one', () => {
    expect(clean('\xff'.repeat(5000) + '\n')).toBe('\uFFFD'.repeat(5000) + '\n')
    const emoji = utf8('😀'.repeat(3000))
    expect(render([...emoji].map((byte) => Uint8Array.of(byte))).text).toBe('😀'.repeat(3000))
  })

  it('keeps batched text and line edits in order', () => {
    // "ab�c", CR, "X�" over the start, two steps left, "Y" at column 0, erase to the end, "z".
    expect(clean('ab\xffc\rX\xff\b\bY\x1b[Kz\n')).toBe('Yz\n')
  })
})

describe('TerminalSanitizer: bounds', () => {
  it('swallows an unterminated OSC without keeping it, and recovers at BEL', () => {
    const sanitizer = new TerminalSanitizer()
    sanitizer.write(raw('a\x1b]133;D;0'))
    const flood = Buffer.alloc(1 << 20, 0x41)
    for (let round = 0; round < 16; round++) expect(sanitizer.write(flood).lines).toEqual([])
    const after = sanitizer.write(raw('\x07b\n'))
    expect(after.lines).toEqual(['ab'])
    expect(after.markers).toEqual([])
  })

  it('keeps the tail of a line longer than the cap and reports it clipped', () => {
    const out = render(['0123456789abcdef\nshort\n', 'xyz'.repeat(5)], { maxLineLength: 8 })
    expect(out.text).toBe('89abcdef\nshort\nyzxyzxyz')
    expect(out.clipped).toEqual([0])
    expectSplitInvariantCapped('0123456789\r\x1b[Kab\b\bcd\x1b[3Gxy\nemoji😀😀😀😀😀😀😀😀😀end\n', 6)
  })

  it('bounds a partial line that never ends, however it arrives', () => {
    const sanitizer = new TerminalSanitizer({ maxLineLength: 1000 })
    for (let round = 0; round < 200; round++) sanitizer.write(raw('x'.repeat(1500)))
    expect(sanitizer.line.length).toBe(300_000)
    expect(sanitizer.line.base).toBe(299_000)
    expect(sanitizer.line.text()).toBe('x'.repeat(1000))
  })

  it('keeps the terminal truth of the retained tail when a capped line is rewritten after CR', () => {
    const sanitizer = new TerminalSanitizer({ maxLineLength: 1000 })
    // A terminal ends with 'y' * 1003 + 'x' * 997 on the line; the cap keeps its last 1000 columns.
    for (let round = 0; round < 200; round++) sanitizer.write(raw('x'.repeat(997) + '\r' + 'y'.repeat(1003)))
    expect(sanitizer.line.length).toBe(2000)
    expect(sanitizer.line.base).toBe(1000)
    expect(sanitizer.line.text()).toBe('yyy' + 'x'.repeat(997))
  })
})

function expectSplitInvariantCapped(text: string, maxLineLength: number): void {
  const bytes = utf8(text)
  const whole = render([bytes], { maxLineLength })
  for (let cut = 0; cut <= bytes.length; cut++) {
    expect(render([bytes.subarray(0, cut), bytes.subarray(cut)], { maxLineLength })).toEqual(whole)
  }
}

describe('continuation markers and the alternate screen', () => {
  it("reports PS2's marker (133;A;k=c;<nonce>) as a continuation marker, with its number", () => {
    const sanitizer = new TerminalSanitizer()
    const chunk = sanitizer.write(Buffer.from('echo "a\r\n\x1b]133;A;k=c;424242\x07> '))
    expect(chunk.markers).toEqual([{ line: 1, column: 0, kind: 'continuation', nonce: 424242 }])
    expect(chunk.line.text()).toBe('> ')
    expect(sanitizer.write(Buffer.from('\x1b]133;A;k=c;\x07')).markers).toEqual([{ line: 1, column: 2, kind: 'continuation', nonce: null }])
    // Other semantic-prompt payloads are not markers.
    expect(sanitizer.write(Buffer.from('\x1b]133;A\x07\x1b]133;A;k=s;1\x07')).markers).toEqual([])
  })

  it('tracks the alternate screen through DEC private modes 1049, 1047 and 47, and nothing else', () => {
    const sanitizer = new TerminalSanitizer()
    expect(sanitizer.alternateScreen).toBe(false)
    sanitizer.write(Buffer.from('\x1b[?1049h'))
    expect(sanitizer.alternateScreen).toBe(true)
    sanitizer.write(Buffer.from('\x1b[?25l\x1b[?2004h\x1b[1049l'))
    expect(sanitizer.alternateScreen).toBe(true)
    sanitizer.write(Buffer.from('\x1b[?1049'))
    sanitizer.write(Buffer.from('l'))
    expect(sanitizer.alternateScreen).toBe(false)
    sanitizer.write(Buffer.from('\x1b[?47h'))
    expect(sanitizer.alternateScreen).toBe(true)
    sanitizer.write(Buffer.from('\x1b[?1047l'))
    expect(sanitizer.alternateScreen).toBe(false)
    // A private mode does not edit the line, but what follows the switch is drawn on the alternate screen.
    expect(sanitizer.write(Buffer.from('ab\x1b[?1049hcd')).line.text()).toBe('ab')
    expect(sanitizer.write(Buffer.from('\x1b[?1049lef')).line.text()).toBe('abef')
  })
})

describe('REPL prompt markers', () => {
  it('reads nonce, pid, prompt length and name from 133;A;k=r, and nothing malformed', () => {
    const sanitizer = new TerminalSanitizer()
    const chunk = sanitizer.write(Buffer.from('\x1b]133;A;k=r;515151;4711;4;python3\x07>>> '))
    expect(chunk.markers).toEqual([{ line: 0, column: 0, kind: 'repl', nonce: 515151, repl: { pid: 4711, promptLength: 4, name: 'python3' } }])
    for (const payload of ['133;A;k=r;515151;4711;4', '133;A;k=r;x;4711;4;python3', '133;A;k=r;1;2;3;bad name', '133;A;k=r;1;2;3;a\x01b']) {
      expect(sanitizer.write(Buffer.from(`\x1b]${payload}\x07`)).markers).toEqual([])
    }
  })
})
