import { SubprocessError, type SubprocessTerminalHandle, type TerminalExit } from 'dsh-subprocess'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { diedWithSessionHost, LOSS_LOOK_MS } from '../src/session/durable-lost'

// The look that tells a session host's loss from a SIGKILL exit: an empty write. A provider whose
// link never answers it (a fake: a stuck connect command cannot be made to hang on cue) must not
// hold the send that the exit ends: the look is bounded by LOSS_LOOK_MS, then the exit stands.

/** A handle that exited as `exit` and answers an empty write with `write`. */
function exitedHandle(exit: TerminalExit, write: () => Promise<void>): SubprocessTerminalHandle {
  return { exit, write } as unknown as SubprocessTerminalHandle
}

afterEach(() => {
  vi.useRealTimers()
})

describe('diedWithSessionHost', () => {
  it('a link that never answers the empty write: the look ends after LOSS_LOOK_MS, as an exit', async () => {
    vi.useFakeTimers()
    let writes = 0
    const handle = exitedHandle({ exitCode: null, signal: 'SIGKILL' }, () => {
      writes++
      return new Promise<void>(() => {})
    })
    let answer: boolean | undefined
    void diedWithSessionHost(handle).then((lost) => (answer = lost))
    await vi.advanceTimersByTimeAsync(LOSS_LOOK_MS - 1)
    expect(writes).toBe(1)
    expect(answer).toBeUndefined()
    await vi.advanceTimersByTimeAsync(1)
    expect(answer).toBe(false)
  })

  it('SESSION_HOST_LOST from the write is a loss; TERMINAL_EXITED is an exit; another exit is not looked at', async () => {
    const lost = exitedHandle({ exitCode: null, signal: 'SIGKILL' }, () => Promise.reject(new SubprocessError('SESSION_HOST_LOST', 'gone')))
    expect(await diedWithSessionHost(lost)).toBe(true)
    const exited = exitedHandle({ exitCode: null, signal: 'SIGKILL' }, () => Promise.reject(new SubprocessError('TERMINAL_EXITED', 'exited')))
    expect(await diedWithSessionHost(exited)).toBe(false)
    const write = vi.fn(() => Promise.resolve())
    expect(await diedWithSessionHost(exitedHandle({ exitCode: 0, signal: null }, write))).toBe(false)
    expect(write).not.toHaveBeenCalled()
  })
})
