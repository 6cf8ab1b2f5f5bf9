import { Buffer } from 'node:buffer'
import fc from 'fast-check'
import type { TerminalSize } from 'dsh-terminal'
import { describe, expect, it } from 'vitest'
import { MAX_REPLAY_BYTES, ScreenModel } from '../src/screen/screen-model'

// The screen model parses output only when it is needed. These tests hold it to the promise that
// makes that safe: the screen, the replay, the key modes and the answers are what an emulator fed
// every byte at once would give, and output nobody looks at costs no parse and bounded memory.

function model(size: TerminalSize = { rows: 6, cols: 30 }): { screen: ScreenModel; replies: string[] } {
  const replies: string[] = []
  return { screen: new ScreenModel({ size, reply: (data) => replies.push(data) }), replies }
}

function bytes(text: string): Buffer {
  return Buffer.from(text, 'utf8')
}

/** A chunk of output, or a resize of the PTY at that point. */
type Step = { readonly output: string; readonly keepUp: boolean } | { readonly resize: TerminalSize }

function play(screen: ScreenModel, steps: readonly Step[], keepUp?: boolean): void {
  for (const step of steps) {
    if ('resize' in step) screen.resize(step.resize)
    else screen.write(bytes(step.output), keepUp ?? step.keepUp)
  }
}

describe('a screen model that sleeps', () => {
  it('does not parse, nor even create an emulator for, output on the normal screen that asks nothing', () => {
    const { screen } = model()
    const output = 'dsh> ls\r\nREADME.md  src\r\n\x1b]133;D;0\x07dsh> \x1b[?2004h'
    screen.write(bytes(output), false)
    expect(screen.emulating).toBe(false)
    expect(screen.waitingBytes).toBe(Buffer.byteLength(output))
  })

  it('renders, replays and tells the modes of waiting output as an emulator fed every byte at once', async () => {
    await fc.assert(
      fc.asyncProperty(steps, async (played) => {
        const sleeping = model().screen
        const awake = model().screen
        play(sleeping, played)
        play(awake, played, true)
        expect(await sleeping.snapshot()).toEqual(await awake.snapshot())
        expect(await sleeping.replay()).toEqual(await awake.replay())
        expect(sleeping.modes).toEqual(awake.modes)
        expect(sleeping.waitingBytes).toBe(0)
        sleeping.dispose()
        awake.dispose()
      }),
      { numRuns: 300 },
    )
  })

  it('answers a query at once while asleep, once, after parsing the output that waited before it', async () => {
    const { screen, replies } = model({ rows: 5, cols: 20 })
    screen.write(bytes('one\r\ntwo'), false)
    expect(screen.emulating).toBe(false)
    screen.write(bytes('\x1b[6n'), false)
    expect(screen.waitingBytes).toBe(0)
    await screen.snapshot()
    // The cursor after "two" on row 2: the waiting output was parsed before the query.
    expect(replies).toEqual(['\x1b[2;4R'])
    screen.write(bytes('\r\nmore output\r\n'), false)
    await screen.snapshot()
    expect(replies).toEqual(['\x1b[2;4R'])
  })

  it('answers a query split across chunks', async () => {
    const { screen, replies } = model({ rows: 5, cols: 20 })
    screen.write(bytes('x\x1b['), false)
    screen.write(bytes('6'), false)
    expect(screen.emulating).toBe(false)
    screen.write(bytes('n'), false)
    await screen.snapshot()
    expect(replies).toEqual(['\x1b[1;2R'])
  })

  it('keeps at most the bound of a flood nobody looks at, and then shows its last rows, title and modes', async () => {
    const { screen } = model()
    screen.write(bytes('\x1b]2;the title\x07\x1b[?2004h\x1b[?1h'), false)
    let line = 0
    let peak = 0
    while (line < 60_000) {
      let chunk = ''
      for (let count = 0; count < 100; count++) chunk += `line ${++line}\r\n`
      screen.write(bytes(chunk), false)
      peak = Math.max(peak, screen.waitingBytes)
    }
    expect(screen.emulating).toBe(false)
    expect(peak).toBeLessThanOrEqual(MAX_REPLAY_BYTES + 2048)
    const rendered = await screen.snapshot()
    expect(rendered.lines).toEqual(['line 59996', 'line 59997', 'line 59998', 'line 59999', 'line 60000'])
    expect(rendered.title).toBe('the title')
    expect(screen.modes).toEqual({ applicationCursorKeys: true, applicationKeypad: false, bracketedPaste: true })
  })

  it('never shows the payload of a string whose start was dropped', async () => {
    const { screen } = model()
    screen.write(bytes('before\r\n\x1b]52;c;'), false)
    for (let count = 0; count < 40; count++) screen.write(bytes('A'.repeat(64 * 1024)), false)
    // Still inside the string: nothing of it may be kept to start again at.
    expect(screen.waitingBytes).toBeLessThan(64 * 1024)
    screen.write(bytes('\x07'), false)
    screen.write(bytes('after\r\n'), false)
    const rendered = await screen.snapshot()
    expect(rendered.lines.join('\n')).not.toContain('AAAA')
    expect(rendered.lines).toContain('after')
  })

  it('shows what follows a dropped string in the same chunk as its end', async () => {
    for (const [name, end] of [
      ['ST', '\x1b\\'],
      ['BEL', '\x07'],
    ] as const) {
      const { screen } = model()
      // A clipboard write asks nothing: it waits, and most of it is dropped.
      screen.write(bytes('before\r\n\x1b]52;c;'), false)
      for (let count = 0; count < 8; count++) screen.write(bytes('A'.repeat(64 * 1024)), false)
      screen.write(bytes(`${'A'.repeat(100)}${end}strings-done\r\ndsh> `), false)
      const rendered = await screen.snapshot()
      expect(rendered.lines, name).toEqual(['strings-done', 'dsh>'])
    }
  })

  it('lays out what follows a dropped string for the size the PTY had meanwhile', async () => {
    const { screen } = model({ rows: 4, cols: 10 })
    screen.write(bytes('\x1b]52;c;'), false)
    for (let count = 0; count < 6; count++) screen.write(bytes('A'.repeat(64 * 1024)), false)
    await screen.snapshot()
    screen.resize({ rows: 4, cols: 20 })
    screen.write(bytes('B'.repeat(1024)), false)
    screen.write(bytes('\x07'), false)
    screen.write(bytes('0123456789ABCDE'), false)
    const rendered = await screen.snapshot()
    expect(rendered.size).toEqual({ rows: 4, cols: 20 })
    expect(rendered.lines).toEqual(['0123456789ABCDE'])
  })

  it('stays in step with the alternate screen: a full-screen program is parsed as it draws', async () => {
    const { screen } = model()
    screen.write(bytes('shell\r\n\x1b[?1049h\x1b[Hfull'), true)
    expect(screen.emulating).toBe(true)
    expect(screen.waitingBytes).toBe(0)
    screen.write(bytes(' screen'), true)
    expect(screen.waitingBytes).toBe(0)
    expect((await screen.snapshot()).lines).toEqual(['full screen'])
    screen.write(bytes('\x1b[?1049l'), false)
    screen.write(bytes('back\r\n'), false)
    // The program left: its last chunk and what follows wait for the next need.
    expect(screen.waitingBytes).toBe(Buffer.byteLength('\x1b[?1049lback\r\n'))
    expect((await screen.snapshot()).lines).toEqual(['shell', 'back'])
  })
})

/** Pieces of output that move, erase, colour, switch screens, set modes and titles. */
const PIECES = [
  'hello',
  'wide \u4e2d\u6587',
  '\r\n',
  '\r',
  '\b',
  '\t',
  '\x1b[2;5H',
  '\x1b[H\x1b[2J',
  '\x1b[K',
  '\x1b[1A',
  '\x1b[3L',
  '\x1b[31;1m',
  '\x1b[0m',
  '\x1b[?1049h',
  '\x1b[?1049l',
  '\x1b[?1h',
  '\x1b[?2004h',
  '\x1b[?2004l',
  '\x1b=',
  '\x1b]2;a title\x07',
  '\x1b]133;D;0\x07',
  '\x1b[2;4r',
  '\x1b7',
  '\x1b8',
  '\x1b[',
  '5',
  'm',
]

/** Output in chunks, each parsed at once or left waiting at random, with resizes between chunks. */
const steps: fc.Arbitrary<Step[]> = fc.array(
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        output: fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 6 }).map((pieces) => pieces.join('')),
        keepUp: fc.boolean(),
      }),
    },
    { weight: 1, arbitrary: fc.record({ resize: fc.record({ rows: fc.integer({ min: 2, max: 8 }), cols: fc.integer({ min: 10, max: 40 }) }) }) },
  ),
  { minLength: 1, maxLength: 25 },
)
