import { describe, expect, it } from 'vitest'
import { launchFrame, ptyEnvironment, WARM_GO, WARM_READY } from '../src/warm/launcher-script'
import { LauncherPrelude } from '../src/warm/prelude'

const bytes = (text: string) => Buffer.from(text, 'latin1')

describe('a warm launcher prelude', () => {
  it('is ready on exactly the ready marker, also when it arrives in pieces', async () => {
    const prelude = new LauncherPrelude()
    expect(prelude.feed(WARM_READY.subarray(0, 3))).toBeUndefined()
    expect(prelude.launchable).toBe(false)
    expect(prelude.feed(WARM_READY.subarray(3))).toBeUndefined()
    expect(await prelude.ready).toBe(true)
    expect(prelude.launchable).toBe(true)
  })

  it('withholds the go marker, split anywhere, and passes the program bytes after it', () => {
    const prelude = new LauncherPrelude()
    prelude.feed(WARM_READY)
    prelude.launched()
    expect(prelude.feed(WARM_GO.subarray(0, 5))).toBeUndefined()
    expect(prelude.feed(Buffer.concat([WARM_GO.subarray(5), bytes('PROMPT$ ')]))?.toString('latin1')).toBe('PROMPT$ ')
  })

  it('passes nothing when the go marker ends a chunk', () => {
    const prelude = new LauncherPrelude()
    prelude.feed(WARM_READY)
    prelude.launched()
    expect(prelude.feed(WARM_GO)?.length).toBe(0)
  })

  it('is never launchable after anything but the ready marker, or output while it waits, or an exit', async () => {
    const wrong = new LauncherPrelude()
    wrong.feed(bytes('perl: warning: something\r\n'))
    expect(await wrong.ready).toBe(false)
    expect(wrong.launchable).toBe(false)

    const chatty = new LauncherPrelude()
    chatty.feed(WARM_READY)
    chatty.feed(bytes('x'))
    expect(chatty.launchable).toBe(false)
    expect(() => chatty.launched()).toThrow()

    const gone = new LauncherPrelude()
    gone.feed(WARM_READY.subarray(0, 4))
    gone.ended()
    expect(await gone.ready).toBe(false)
    expect(gone.launchable).toBe(false)
  })
})

describe('a launch frame', () => {
  it('is the payload length, a newline, then the NUL-joined fields as UTF-8 bytes', () => {
    const value = `two\nlines \x03 \x11 \r é ${'x'.repeat(5000)}`
    const frame = launchFrame('/tmp', '/bin/sh', ['-c', 'x'], [`BIG=${value}`])
    const newline = frame.indexOf(10)
    const payload = frame.subarray(newline + 1)
    expect(Number(frame.subarray(0, newline).toString('latin1'))).toBe(payload.length)
    expect(payload.toString('utf8').split('\0')).toEqual(['/tmp', '/bin/sh', '2', '-c', 'x', `BIG=${value}`])
  })

  it("gives the program node-pty's environment: PWD and TERM set, a name already present keeping its place", () => {
    expect(ptyEnvironment({ TERM: 'dumb', A: '1', PWD: '/old' }, '/new', 'xterm')).toEqual(['TERM=xterm', 'A=1', 'PWD=/new'])
    expect(ptyEnvironment({ A: '1' }, '/new', 'xterm')).toEqual(['A=1', 'PWD=/new', 'TERM=xterm'])
  })
})
