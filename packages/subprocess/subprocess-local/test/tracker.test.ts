import { describe, expect, it } from 'vitest'
import type { ProcessRecord } from '../src/internal'
import { Tracker } from '../src/tracker'

const rec = (pid: number, started: string, zombie = false): ProcessRecord => ({
  pid,
  started,
  ppid: 1,
  pgid: pid,
  sid: 1,
  tpgid: 1,
  ttyNr: 0,
  zombie,
  stopped: false,
  threads: 1,
})

describe('Tracker', () => {
  it('tracks live descendants by identity, never the shell, and drops zombies', () => {
    const tracker = new Tracker(1)
    tracker.remember([rec(1, 'a'), rec(2, 'b'), rec(3, 'c')])
    tracker.remember([rec(3, 'c', true)])
    expect(tracker.list()).toEqual([{ pid: 2, started: 'b' }])
  })

  it('replaces a recycled pid and forgets only matching identities', () => {
    const tracker = new Tracker(1)
    tracker.remember([rec(2, 'old')])
    tracker.remember([rec(2, 'new')])
    tracker.forget([{ pid: 2, started: 'old' }])
    expect(tracker.list()).toEqual([{ pid: 2, started: 'new' }])
  })

  it('retains the living among the identities it checked, keeping ones added meanwhile', () => {
    const tracker = new Tracker(1)
    tracker.remember([rec(2, 'b'), rec(3, 'c'), rec(4, 'd')])
    const checked = tracker.list()
    tracker.remember([rec(5, 'e')])
    tracker.retain(checked, [{ pid: 3, started: 'c' }])
    expect(
      tracker
        .list()
        .map((identity) => identity.pid)
        .sort(),
    ).toEqual([3, 5])
    expect(tracker.size).toBe(2)
  })
})
