import type { TerminalScreen, TerminalSendResult } from 'dsh-terminal'
import { Deferred } from 'dsh-testkit'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ScreenModel } from '../src/screen/screen-model'
import { showsScreen } from '../src/screen/screen-send'
import { isSettled, openFake, tick } from './support/fake-session'
import { prompt } from './support/fake-terminal'

// The order of settlements is what matters here: the session's screen is held by hand.
const SCREEN: TerminalScreen = { lines: ['~'], size: { rows: 2, cols: 4 }, cursor: { row: 1, col: 1 }, alternateScreen: false }

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
})

/** A session whose screen snapshots wait for `snapshot`, counted. */
async function heldScreen() {
  const opened = await openFake()
  const snapshot = new Deferred<TerminalScreen>()
  const snapshots = vi.spyOn(ScreenModel.prototype, 'snapshot').mockImplementation(() => snapshot.promise)
  return { ...opened, snapshot, snapshots }
}

describe('a send result showing the screen', () => {
  it('holds done and the reservation until the screen is rendered into the result, when the program drew in place', async () => {
    const { fake, session, snapshot, snapshots } = await heldScreen()
    const op = session.startSend({ text: 'progress', submit: true })
    // A redraw one row up on the normal screen, then the prompt: the lines are fragments, the screen is the answer.
    fake.emit(`progress\r\n10%\r\n\x1b[A20%\r\n${prompt(0)}`)
    await tick(0)
    expect(snapshots).toHaveBeenCalledTimes(1)
    expect(await isSettled(op.done)).toBe(false)
    expect(await isSettled(op.released!)).toBe(false)
    snapshot.resolve(SCREEN)
    expect(await op.done).toMatchObject({ waitReason: 'stdin_read', screen: SCREEN })
    await op.released
  })

  it('leaves a line result alone: no snapshot, done as soon as the prompt settles it', async () => {
    const { fake, session, snapshots } = await heldScreen()
    const op = session.startSend({ text: 'true', submit: true })
    fake.emit(`true\r\n${prompt(0)}`)
    await tick(0)
    const result = await op.done
    expect(result.screen).toBeUndefined()
    expect(snapshots).not.toHaveBeenCalled()
    await op.released
  })

  it('settles without a screen when the emulator is gone meanwhile', async () => {
    const { fake, session, snapshot } = await heldScreen()
    const op = session.startSend({ text: 'progress', submit: true })
    fake.emit(`progress\r\n10%\r\n\x1b[A20%\r\n${prompt(0)}`)
    await tick(0)
    snapshot.reject(new Error('closed'))
    const result = await op.done
    expect(result.waitReason).toBe('stdin_read')
    expect(result.screen).toBeUndefined()
    await op.released
  })
})

describe('showsScreen', () => {
  const running = (extra: Partial<TerminalSendResult> = {}): TerminalSendResult => ({
    viewport: '',
    waitReason: 'stdin_read',
    sessionStatus: { kind: 'running' },
    truncated: false,
    ...extra,
  })
  const source = (alternateScreen: boolean, verticalMoves: number) => ({ alternateScreen: () => alternateScreen, verticalMoves: () => verticalMoves })

  it('says yes for keys input, the alternate screen, or rows moved during the send; no for an exited session or plain lines', () => {
    expect(showsScreen(running({ input: { kind: 'keys', alternateScreen: false } }), source(false, 0), 0)).toBe(true)
    expect(showsScreen(running({ input: { kind: 'program' } }), source(true, 0), 0)).toBe(true)
    expect(showsScreen(running({ input: { kind: 'prompt' } }), source(false, 3), 2)).toBe(true)
    expect(showsScreen(running({ input: { kind: 'prompt' } }), source(false, 2), 2)).toBe(false)
    expect(showsScreen(running({ sessionStatus: { kind: 'exited', exitCode: 0, signal: null } }), source(true, 9), 0)).toBe(false)
  })
})
