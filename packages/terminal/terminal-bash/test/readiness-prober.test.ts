import type { ForegroundFacts } from 'dsh-subprocess'
import { Deferred } from 'dsh-testkit'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { ProbeSample } from '../src/readiness/evidence'
import { ForegroundProber } from '../src/readiness/foreground-prober'

interface Rig {
  prober: ForegroundProber
  /** performance.now() at the start of each inspection. */
  starts: number[]
  samples: ProbeSample[]
  arrivals: number
  held: Deferred<ForegroundFacts | undefined>[] | undefined
  /** What onSample answers: the delay of a requested follow-up probe. */
  followUp: number | undefined
}

function rig(maxDelayMs = 50): Rig {
  const r: Rig = { starts: [], samples: [], arrivals: 0, held: undefined, followUp: undefined } as unknown as Rig
  r.prober = new ForegroundProber(
    {
      inspect: () => {
        r.starts.push(performance.now())
        if (!r.held) return Promise.resolve(undefined)
        const d = new Deferred<ForegroundFacts | undefined>()
        r.held.push(d)
        return d.promise
      },
      arrivals: () => r.arrivals,
      onSample: (s) => {
        r.samples.push(s)
        return r.followUp
      },
    },
    maxDelayMs,
  )
  return r
}

let t0 = 0
const at = (r: Rig) => r.starts.map((t) => Math.round(t - t0))

describe('foreground prober', () => {
  beforeEach(() => {
    vi.useFakeTimers()
    t0 = performance.now()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('backs off 1, 2, 4 … ms up to the cap while nothing happens', async () => {
    const r = rig(50)
    r.prober.start()
    await vi.advanceTimersByTimeAsync(300)
    r.prober.stop()
    expect(at(r).slice(0, 9)).toEqual([1, 3, 7, 15, 31, 63, 113, 163, 213])
  })

  it('probes right after an output burst that follows a quiet gap', async () => {
    const r = rig(50)
    r.prober.start()
    await vi.advanceTimersByTimeAsync(100)
    const before = r.starts.length
    r.arrivals += 1
    r.prober.noteOutput(40)
    await vi.advanceTimersByTimeAsync(0)
    expect(r.starts.length).toBe(before + 1)
    expect(Math.round((r.starts.at(-1) as number) - t0)).toBe(100)
    r.prober.stop()
  })

  it('coalesces a burst into one probe and keeps a flood spaced out', async () => {
    const r = rig(50)
    r.prober.start()
    for (let ms = 0; ms < 200; ms++) {
      // Output every millisecond: never a quiet gap as long as the current delay.
      r.arrivals += 1
      r.prober.noteOutput(1)
      r.prober.noteOutput(0)
      await vi.advanceTimersByTimeAsync(1)
    }
    r.prober.stop()
    // Without backoff this would be ~200 probes; with it the gaps grow to the cap.
    expect(r.starts.length).toBeLessThan(15)
  })

  it('keeps one inspection in flight and drops results after stop', async () => {
    const r = rig(50)
    r.held = []
    r.prober.start()
    await vi.advanceTimersByTimeAsync(1)
    expect(r.held.length).toBe(1)
    r.prober.probeNow()
    r.prober.probeNow()
    await vi.advanceTimersByTimeAsync(10)
    expect(r.held.length).toBe(1)
    r.prober.stop()
    r.held[0]?.resolve(undefined)
    await vi.advanceTimersByTimeAsync(100)
    expect(r.samples).toEqual([])
    expect(r.held.length).toBe(1)
  })

  it('an urgent request during an inspection runs right after it', async () => {
    const r = rig(50)
    r.held = []
    r.prober.start()
    await vi.advanceTimersByTimeAsync(1)
    r.prober.probeNow()
    r.held[0]?.resolve(undefined)
    await vi.advanceTimersByTimeAsync(0)
    expect(r.held.length).toBe(2)
    r.prober.stop()
  })

  it('a follow-up request probes again exactly that long after the sample started', async () => {
    const r = rig(50)
    r.prober.start()
    await vi.advanceTimersByTimeAsync(40)
    r.followUp = 1
    const count = r.starts.length
    await vi.advanceTimersByTimeAsync(40)
    r.followUp = 7
    const next = r.starts.length
    await vi.advanceTimersByTimeAsync(40)
    r.prober.stop()
    const gaps = (from: number) =>
      r.starts
        .slice(from)
        .map((t, i, all) => (i === 0 ? 0 : Math.round(t - (all[i - 1] as number))))
        .slice(2, 4)
    expect(gaps(count)).toEqual([1, 1])
    expect(gaps(next)).toEqual([7, 7])
  })

  it('a result that started before a pause is dropped even if probing restarted', async () => {
    const r = rig(50)
    r.held = []
    r.prober.start()
    await vi.advanceTimersByTimeAsync(1)
    r.prober.pause()
    r.prober.start()
    r.held[0]?.resolve(undefined)
    await vi.advanceTimersByTimeAsync(0)
    expect(r.samples).toEqual([])
    r.prober.stop()
  })
})
