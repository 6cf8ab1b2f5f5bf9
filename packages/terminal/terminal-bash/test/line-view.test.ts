import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { TerminalSanitizer } from '../src/output'
import { raw, render, utf8 } from './helpers'
import { installed } from 'dsh-testkit'

/** Completed lines and the live line of `chunks` fed to one sanitizer of a `rows`-row screen. */
function onScreen(rows: number, chunks: string[]): { lines: string[]; live: string } {
  const sanitizer = new TerminalSanitizer({ rows, cols: 80 })
  const lines: string[] = []
  for (const chunk of chunks) lines.push(...sanitizer.write(raw(chunk)).lines)
  return { lines, live: sanitizer.line.text() }
}

describe('the line view of rows redrawn in place (no alternate screen)', () => {
  it('does not repeat a page a pager repaints over itself, as less -X does before /250', () => {
    const page = 'dsh> less\r\n1\r\n2\r\n3\r\n4\r\n:'
    const repaint = '\r\x1b[K\x1b[1;1Hdsh> less\r\n\x1b[2;1H1\r\n\x1b[3;1H2\r\n\x1b[4;1H3\r\n\x1b[5;1H4\r\n'
    const next = '\x1b[6;1H...skipping...\r\n9\r\n10\r\n:'
    expect(onScreen(6, [page, repaint, repaint, next])).toEqual({ lines: ['dsh> less', '1', '2', '3', '4', '...skipping...', '9', '10'], live: ':' })
  })

  it('keeps a row redrawn with other text as a new line, and drops only the unchanged ones', () => {
    const frame = 'a\r\nb\r\nc'
    const redraw = '\x1b[2A\r\x1b[2Ka2\r\n\x1b[2Kb\r\n\x1b[2Kc2'
    expect(onScreen(10, [frame, redraw])).toEqual({ lines: ['a', 'b', 'a2'], live: 'c2' })
  })

  it('repeats nothing after a clear: the same text printed again is new output', () => {
    expect(onScreen(10, ['x\r\n\x1b[H\x1b[2Jx\r\n\x1b[Hx\r\n'])).toEqual({ lines: ['x', 'x'], live: '' })
  })

  it('compares only rows still on the screen, counting scrolls and wrapped lines', () => {
    // Three rows: after 1–4 the screen holds 3, 4 and the cursor's empty row.
    expect(onScreen(3, ['1\r\n2\r\n3\r\n4\r\n', '\x1b[1;1H3\r\n1\r\n'])).toEqual({ lines: ['1', '2', '3', '4', '1'], live: '' })
    // The row that entered at the bottom is blank, whatever scrolled off the top before.
    expect(onScreen(3, ['1\r\n2\r\n3\r\n4\r\n', '\x1b[3;1H2\r\n'])).toEqual({ lines: ['1', '2', '3', '4', '2'], live: '' })
    // A 100-column line on an 80-column screen takes two rows, so the next line is on row 2.
    const long = 'y'.repeat(100)
    expect(onScreen(5, [`${long}\r\nz\r\n`, '\x1b[3;1Hz\r\n', '\x1b[2;1Hz\r\n'])).toEqual({ lines: [long, 'z', 'z'], live: '' })
  })

  it('counts rows on the new screen after a resize', () => {
    const sanitizer = new TerminalSanitizer({ rows: 10, cols: 80 })
    sanitizer.write(raw('a\r\nb\r\n'))
    sanitizer.resize(20, 80)
    // What rows held before the resize is forgotten, so a redraw there is new output.
    expect(sanitizer.write(raw('\x1b[1;1Ha\r\n')).lines).toEqual(['a'])
  })

  it('ignores row moves drawn on the alternate screen', () => {
    expect(render([raw('a\r\nb\r\n\x1b[?1049h\x1b[1;1Hx\r\n\x1b[?1049la\r\n')]).text).toBe('a\nb\na\n')
  })
})

/** Line edits compared with what tmux shows for the same bytes (each case one line, then a newline). */
const EDITS: readonly string[] = [
  'abcdef\b\b\b',
  'dsh> echo hello world\b\b\b\b\b',
  'dsh> echo abc\b \b\b \b',
  'dsh> echo hello world\b\b\b\b\b\b\x1b[1Pworld\b\b\b\b\b\b',
  'dsh> echo ab world\b\b\b\b\b\x1b[1@X',
  '10%\r20%\r100%',
  'abcdef\r\x1b[Kxy',
  'abcdef\x1b[3G\x1b[1K',
  'abcdef\x1b[2Kxy',
  'abcdef\x1b[3G\x1b[2X',
  'abcdef\x1b[2G\x1b[3P',
  'ab\x1b[5Gc\x1b[2Cd\x1b[3De',
  'abc\x1b[9CX',
  // Wide characters take two columns: readline moves over them with two backspaces.
  'dsh> echo 一二三 😀 end\b\b\b\b\b\b\b\x1b[1@X',
  'dsh> echo 漢字 ab\b\b\b\b\b\b\x1b[2P',
  '漢字\rX',
  'ab\r漢',
  '😀😀x\x1b[1GZZZ',
  // Zero-width code points (a combining accent, U+200B) join the character before them and take no column.
  'e\u0301x\x1b[3Gy',
  'a\u200Bb\x1b[3GY',
  'xyz\r\x1b[2Ce\u0301Q\x1b[4GW',
  '\u0301abc',
  'ab\x1b[3C\u0301c',
  'abcdef\x1b[3G\u0301',
  '🚀⚡✅ tail\x1b[5GY',
]

describe('wide characters', () => {
  it('take two columns, so moves, inserts and deletes land where a terminal puts them', () => {
    expect(render([utf8('dsh> echo 一二三 😀 end\b\b\b\b\b\b\b\x1b[1@X\r\n')]).text).toBe('dsh> echo 一二三X 😀 end\n')
    expect(render([utf8('漢字\rX\n')]).text).toBe('X 字\n')
    expect(render([utf8('ab\r漢\n')]).text).toBe('漢\n')
  })

  it('leave a blank where an edit cuts one in half (as xterm does)', () => {
    expect(render([utf8('ab漢字\x1b[3G\x1b[1P\n')]).text).toBe('ab 字\n')
    expect(render([utf8('漢字ab\x1b[2G\x1b[1@\n')]).text).toBe('   字ab\n')
    expect(render([utf8('漢字ab\x1b[2GX\n')]).text).toBe(' X字ab\n')
    expect(render([utf8('漢字ab\x1b[2G\x1b[1X\n')]).text).toBe('  字ab\n')
    expect(render([utf8('漢字\x1b[2G\x1b[K\n')]).text.trimEnd()).toBe('')
  })

  it('count as two columns in the live line', () => {
    const sanitizer = new TerminalSanitizer()
    const line = sanitizer.write(utf8('a漢😀')).line
    expect({ length: line.length, cursor: line.cursor, tail: line.tail(2) }).toEqual({ length: 5, cursor: 5, tail: '😀' })
  })
})

describe('zero-width code points (combining marks, U+200B)', () => {
  const ACCENT = '\u0301'

  it('take no column: they join the character before them in the live line', () => {
    const line = new TerminalSanitizer().write(utf8(`e${ACCENT}a\u200Bb😀\uFE0F`)).line
    expect({ length: line.length, cursor: line.cursor, tail: line.tail(3) }).toEqual({ length: 5, cursor: 5, tail: 'b😀\uFE0F' })
  })

  it('move with their character when cells are deleted, inserted or cut off by the line cap', () => {
    expect(render([utf8(`ae${ACCENT}xyz\x1b[3G\x1b[1P\n`)]).text).toBe(`ae${ACCENT}yz\n`)
    expect(render([utf8(`e${ACCENT}x\r\x1b[1@\n`)]).text).toBe(` e${ACCENT}x\n`)
    expect(render([utf8(`ab${ACCENT}c\n`)], { maxLineLength: 2 }).text).toBe(`b${ACCENT}c\n`)
    expect(render([utf8(`ab${ACCENT}c\n`)], { maxLineLength: 1 }).text).toBe('c\n')
    expect(render([utf8(`a😀${ACCENT}c\n`)], { maxLineLength: 2 }).text).toBe(' c\n')
  })

  it('arriving alone, one per chunk, still join the character before them', () => {
    expect(render([utf8('e'), utf8(ACCENT), utf8('\x07'), utf8(ACCENT), utf8('x\n')]).text).toBe(`e${ACCENT}${ACCENT}x\n`)
    expect(render([utf8('xyz\x1b[2G'), utf8(ACCENT), utf8('\n')]).text).toBe(`x${ACCENT}yz\n`)
  })

  it('are kept up to 32 UTF-16 units a cell, however many a program prints', () => {
    const kept = `a${ACCENT.repeat(31)}b\n`
    expect(render([utf8(`a${ACCENT.repeat(1000)}b\n`)]).text).toBe(kept)
    expect(render(Array.from({ length: 100 }, () => utf8(ACCENT)).concat(utf8('b\n')), {}).text).toBe(`b\n`)
    expect(render([utf8('a'), ...Array.from({ length: 100 }, () => utf8(ACCENT)), utf8('b\n')]).text).toBe(kept)
    expect(render([utf8(`xa\x1b[G\x1b[C${ACCENT.repeat(1000)}\x1b[Cb\n`)]).text).toBe(`x${ACCENT.repeat(31)}ab\n`)
  })
})

describe.skipIf(!installed('tmux'))('line edits as a terminal shows them (tmux)', () => {
  it('renders every case as tmux does, trailing blanks aside', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'dsh-edits-')), 'edits')
    writeFileSync(file, EDITS.map((edit) => `${edit}\n`).join(''), 'utf8')
    const name = `dsh-edits-${process.pid}`
    execFileSync('tmux', ['new-session', '-d', '-s', name, '-x', '160', '-y', '40', `cat ${file}; sleep 60`])
    try {
      let shown: string[] = []
      for (let attempt = 0; attempt < 250 && shown.length < EDITS.length; attempt++) {
        execFileSync('sleep', ['0.02'])
        shown = execFileSync('tmux', ['capture-pane', '-p', '-t', name], { encoding: 'utf8' }).trimEnd().split('\n')
      }
      const firstLine = (edit: string) =>
        render([utf8(`${edit}\n`)])
          .text.split('\n')[0]
          ?.trimEnd()
      const rendered = EDITS.map(firstLine)
      expect(rendered).toEqual(shown.map((line) => line.trimEnd()))
    } finally {
      execFileSync('tmux', ['kill-session', '-t', name])
    }
  })
})
