import { describe, expect, it } from 'vitest'
import { type ForegroundFacts, isNewWait, type StdinWait, type ThreadSample } from 'dsh-subprocess'

function wait(overrides: Partial<StdinWait> = {}): StdinWait {
  return {
    pid: 10,
    tid: 10,
    started: '500',
    state: 'stdin-wait',
    syscall: 270,
    syscallName: 'pselect6',
    fd: 0,
    voluntaryCtxtSwitches: 40,
    nonvoluntaryCtxtSwitches: 2,
    ...overrides,
  }
}

function facts(threads: ThreadSample[], overrides: Partial<ForegroundFacts> = {}): ForegroundFacts {
  const waits = threads.filter((thread): thread is StdinWait => thread.state === 'stdin-wait')
  return {
    sequence: 1,
    processGroupId: 10,
    isShellGroup: false,
    stdinWaitProof: waits.length > 0 ? 'proven' : 'unproven',
    complete: true,
    waits,
    threads,
    ...overrides,
  }
}

describe('isNewWait', () => {
  it('rejects the very wait that was already there (same counters)', () => {
    expect(isNewWait(facts([wait()]), facts([wait()]))).toBe(false)
  })

  it('accepts the same wait once the thread ran since (voluntary or involuntary switches)', () => {
    expect(isNewWait(facts([wait()]), facts([wait({ voluntaryCtxtSwitches: 41 })]))).toBe(true)
    expect(isNewWait(facts([wait()]), facts([wait({ nonvoluntaryCtxtSwitches: 3 })]))).toBe(true)
  })

  it('accepts any proven wait once the foreground group changed', () => {
    const shell = facts([wait({ pid: 5, tid: 5 })], { processGroupId: 5, isShellGroup: true })
    expect(isNewWait(shell, facts([wait()]))).toBe(true)
  })

  it('accepts a wait by a thread that was running or blocked in another syscall', () => {
    const running: ThreadSample = { pid: 10, tid: 10, started: '500', state: 'running' }
    const sleeping: ThreadSample = { pid: 10, tid: 10, started: '500', state: 'blocked', syscall: 230 }
    expect(isNewWait(facts([running]), facts([wait()]))).toBe(true)
    expect(isNewWait(facts([sleeping]), facts([wait()]))).toBe(true)
  })

  it('compares counters when the thread was blocked in the same wait syscall on other fds', () => {
    const epoll: ThreadSample = {
      pid: 10,
      tid: 10,
      started: '500',
      state: 'blocked',
      syscall: 281,
      voluntaryCtxtSwitches: 7,
      nonvoluntaryCtxtSwitches: 0,
    }
    const nodeWait = (voluntary: number) => wait({ syscall: 281, syscallName: 'epoll_pwait', voluntaryCtxtSwitches: voluntary, nonvoluntaryCtxtSwitches: 0 })
    expect(isNewWait(facts([epoll]), facts([nodeWait(7)]))).toBe(false)
    expect(isNewWait(facts([epoll]), facts([nodeWait(9)]))).toBe(true)
    const noCounters: ThreadSample = { pid: 10, tid: 10, started: '500', state: 'blocked', syscall: 281 }
    expect(isNewWait(facts([noCounters]), facts([nodeWait(9)]))).toBe(false)
  })

  it('accepts a thread absent from a complete earlier sample, but not from an incomplete one', () => {
    const other: ThreadSample = { pid: 10, tid: 10, started: '500', state: 'blocked', syscall: 202 }
    const after = facts([other, wait({ tid: 11 })])
    expect(isNewWait(facts([other]), after)).toBe(true)
    expect(isNewWait(facts([other], { complete: false }), after)).toBe(false)
  })

  it('never guesses: unknown earlier state, recycled pid identity, missing samples', () => {
    const unknown: ThreadSample = { pid: 10, tid: 10, started: '500', state: 'unknown' }
    expect(isNewWait(facts([unknown]), facts([wait()]))).toBe(false)
    expect(isNewWait(facts([wait()], { complete: false }), facts([wait({ started: '900' })]))).toBe(false)
    expect(isNewWait(undefined, facts([wait()]))).toBe(false)
    expect(isNewWait(facts([wait()]), undefined)).toBe(false)
  })

  it('is false when nothing waits now', () => {
    const running: ThreadSample = { pid: 10, tid: 10, started: '500', state: 'running' }
    expect(isNewWait(facts([wait()]), facts([running]))).toBe(false)
    expect(isNewWait(facts([wait()], { processGroupId: 3 }), facts([running]))).toBe(false)
  })
})
