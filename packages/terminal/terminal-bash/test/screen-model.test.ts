import { Buffer } from 'node:buffer'
import { describe, expect, it } from 'vitest'
import { MAX_UNPARSED_BYTES, ScreenModel } from '../src/screen/screen-model'

// The emulator alone, fed bytes as the PTY would deliver them; the real-process tests are real-screen-*.
function model(rows = 5, cols = 20): { screen: ScreenModel; replies: string[] } {
  const replies: string[] = []
  const screen = new ScreenModel({ size: { rows, cols }, reply: (data) => replies.push(data) })
  return { screen, replies }
}

/** Output as the session hands it over; `keepUp` as while a full-screen program holds the terminal. */
function feed(screen: ScreenModel, text: string, keepUp = false): void {
  screen.write(Buffer.from(text, 'utf8'), keepUp)
}

describe('the screen model', () => {
  it('renders visible rows trimmed, drops blank bottom rows, and reports a 1-based cursor', async () => {
    const { screen } = model()
    feed(screen, 'abcdef\b\b\b\r\n  two  \r\n\r\n')
    expect(await screen.snapshot()).toEqual({
      lines: ['abcdef', '  two'],
      size: { rows: 5, cols: 20 },
      cursor: { row: 4, col: 1 },
      alternateScreen: false,
    })
  })

  it('reflects every byte handed over before the snapshot was asked for, also when the snapshot is asked at once', async () => {
    const { screen } = model()
    feed(screen, 'first')
    const early = screen.snapshot()
    feed(screen, '\r\nsecond')
    const late = screen.snapshot()
    expect((await early).lines).toEqual(['first'])
    expect((await late).lines).toEqual(['first', 'second'])
    expect(screen.unparsedBytes).toBe(0)
  })

  it('follows the alternate screen, the title, and the key modes a program sets', async () => {
    const { screen } = model()
    feed(screen, 'shell line\r\n\x1b]0;my title\x07\x1b[?1049h\x1b[H\x1b[2Jfull screen\x1b[?1h\x1b=\x1b[?2004h')
    const inside = await screen.snapshot()
    expect(inside).toMatchObject({ lines: ['full screen'], alternateScreen: true, title: 'my title' })
    expect(screen.modes).toEqual({ applicationCursorKeys: true, applicationKeypad: true, bracketedPaste: true })
    feed(screen, '\x1b[?1l\x1b>\x1b[?2004l\x1b[?1049l\x1b]2;\x07')
    const after = await screen.snapshot()
    expect(after).toMatchObject({ lines: ['shell line'], alternateScreen: false })
    expect(after.title).toBeUndefined()
    expect(screen.modes).toEqual({ applicationCursorKeys: false, applicationKeypad: false, bracketedPaste: false })
  })

  it('tells the key modes of every byte handed over, with no wait for the parser (a send reads them as it starts)', () => {
    const { screen } = model()
    feed(screen, 'dsh> \x1b[?2004h')
    expect(screen.modes.bracketedPaste).toBe(true)
    feed(screen, '\x1b[?2004l\x1b[?1h')
    expect(screen.modes).toEqual({ applicationCursorKeys: true, applicationKeypad: false, bracketedPaste: false })
    expect(screen.unparsedBytes).toBe(0)
  })

  it('answers cursor position, device attributes, size and colour queries, in order', async () => {
    const { screen, replies } = model(5, 20)
    feed(screen, 'abc\x1b[6n\x1b[c\x1b[>c\x1b[18t\x1b]11;?\x07\x1b]10;?\x1b\\')
    await screen.snapshot()
    expect(replies).toEqual([
      '\x1b[1;4R',
      '\x1b[?1;2c',
      expect.stringMatching(/^\x1b\[>\d+;\d+;\d+c$/),
      '\x1b[8;5;20t',
      '\x1b]11;rgb:0000/0000/0000\x1b\\',
      '\x1b]10;rgb:ffff/ffff/ffff\x1b\\',
    ])
  })

  it('resizes where the PTY did in the byte stream: earlier output is laid out for the old width', async () => {
    const { screen } = model(3, 10)
    feed(screen, '0123456789ABCDE')
    screen.resize({ rows: 4, cols: 20 })
    expect(screen.size).toEqual({ rows: 4, cols: 20 })
    feed(screen, '\r\n0123456789ABCDE')
    const after = await screen.snapshot()
    expect(after.size).toEqual({ rows: 4, cols: 20 })
    // The first text wrapped at 10 columns before the resize; the second fits one 20-column row.
    expect(after.lines).toEqual(['0123456789', 'ABCDE', '0123456789ABCDE'])
  })

  it('never replies after dispose, and a snapshot asked before dispose still settles', async () => {
    const { screen, replies } = model()
    feed(screen, 'x\x1b[6n')
    const pending = screen.snapshot()
    screen.dispose()
    expect((await pending).lines).toEqual(['x'])
    feed(screen, '\x1b[6n')
    await expect(screen.snapshot()).rejects.toThrow(/disposed/)
    expect(replies).toEqual([])
  })

  it('keeps its backlog bounded when fed faster than its timer parses, and the screen stays exact', async () => {
    // Chunks arrive back to back with no turn of the event loop in between: xterm's own timer never runs.
    const bounded = model(4, 30)
    let peak = 0
    const row = '0123456789abcdefghij0123456789'
    const chunk = Buffer.from(`${row}\r\n`.repeat(2048))
    const total = 8 * MAX_UNPARSED_BYTES
    let fed = 0
    let line = 0
    while (fed < total) {
      bounded.screen.write(chunk, true)
      fed += chunk.length
      line += 1
      peak = Math.max(peak, bounded.screen.unparsedBytes)
    }
    bounded.screen.write(Buffer.from(`last line ${line}`), true)
    expect(peak).toBeLessThanOrEqual(MAX_UNPARSED_BYTES + chunk.length)
    const rendered = await bounded.screen.snapshot()
    expect(rendered.lines).toEqual([row, row, row, `last line ${line}`])
    expect(rendered.cursor).toEqual({ row: 4, col: `last line ${line}`.length + 1 })
  })
})
