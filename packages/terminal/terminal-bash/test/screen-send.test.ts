import type { TerminalScreen, TerminalSendResult } from 'dsh-terminal'
import { Deferred } from 'dsh-testkit'
import { describe, expect, it } from 'vitest'
import { showingScreen } from '../src/screen/screen-send'

// The order of settlements is what matters here, so the operation and the screen are staged by hand.
const SCREEN: TerminalScreen = { lines: ['~'], size: { rows: 2, cols: 4 }, cursor: { row: 1, col: 1 }, alternateScreen: true }

function result(extra: Partial<TerminalSendResult> = {}): TerminalSendResult {
  return { viewport: '', waitReason: 'stdin_read', sessionStatus: { kind: 'running' }, truncated: false, ...extra }
}

function staged(alternateScreen: boolean, verticalMoves = 0) {
  const done = new Deferred<TerminalSendResult>()
  const released = new Deferred()
  const snapshot = new Deferred<TerminalScreen>()
  let snapshots = 0
  const operation = showingScreen(
    { done: done.promise, released: released.promise, readOutput: () => ({ delta: 'd', truncated: false }), cancel: () => true },
    {
      alternateScreen: () => alternateScreen,
      verticalMoves: () => verticalMoves,
      snapshot: () => {
        snapshots += 1
        return snapshot.promise
      },
    },
    0,
  )
  return { operation, done, released, snapshot, snapshots: () => snapshots }
}

describe('a send result showing the screen', () => {
  it('holds the reservation until the screen is rendered into the result', async () => {
    const stage = staged(false)
    const order: string[] = []
    void stage.operation.done.then(() => order.push('done'))
    void stage.operation.released.then(() => order.push('released'))
    stage.released.resolve()
    stage.done.resolve(result({ input: { kind: 'keys', alternateScreen: false } }))
    await Promise.resolve()
    await Promise.resolve()
    expect(order).toEqual([])
    stage.snapshot.resolve(SCREEN)
    expect(await stage.operation.done).toMatchObject({ screen: SCREEN })
    await stage.operation.released
    expect(order).toEqual(['done', 'released'])
  })

  it('shows the screen while the alternate screen is up, and leaves line results alone', async () => {
    const alternate = staged(true)
    alternate.released.resolve()
    alternate.done.resolve(result({ input: { kind: 'program' } }))
    alternate.snapshot.resolve(SCREEN)
    expect((await alternate.operation.done).screen).toEqual(SCREEN)

    const lines = staged(false)
    lines.released.resolve()
    lines.done.resolve(result({ input: { kind: 'prompt' } }))
    expect((await lines.operation.done).screen).toBeUndefined()
    expect(lines.snapshots()).toBe(0)
    expect(lines.operation.readOutput()).toEqual({ delta: 'd', truncated: false })
  })

  it('settles without a screen when the emulator is gone, and releases after a failed write too', async () => {
    const closed = staged(true)
    closed.released.resolve()
    closed.done.resolve(result())
    closed.snapshot.reject(new Error('closed'))
    expect((await closed.operation.done).screen).toBeUndefined()

    const failed = staged(true)
    failed.released.resolve()
    failed.done.reject(new Error('write failed'))
    await expect(failed.operation.done).rejects.toThrow('write failed')
    await failed.operation.released
    expect(failed.snapshots()).toBe(0)
  })
})
