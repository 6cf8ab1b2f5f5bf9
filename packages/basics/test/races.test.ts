import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { raceAbort, settledWithin, withTimeout } from '../src'

function deferred<T>() {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

describe('raceAbort', () => {
  it('is the promise itself without a signal', async () => {
    await expect(raceAbort(Promise.resolve(1), undefined)).resolves.toBe(1)
  })

  it('rejects with the reason at once when the signal already aborted', async () => {
    const controller = new AbortController()
    controller.abort(new Error('gone'))
    await expect(raceAbort(new Promise(() => {}), controller.signal)).rejects.toThrow('gone')
  })

  it('rejects with the reason when the signal aborts first, and ignores a later outcome', async () => {
    const controller = new AbortController()
    const work = deferred<number>()
    const raced = raceAbort(work.promise, controller.signal)
    controller.abort('stop')
    work.reject(new Error('late'))
    await expect(raced).rejects.toBe('stop')
  })

  it('settles as the promise does when it wins, and removes its abort listener', async () => {
    const controller = new AbortController()
    const remove = vi.spyOn(controller.signal, 'removeEventListener')
    const add = vi.spyOn(controller.signal, 'addEventListener')
    await expect(raceAbort(Promise.resolve('done'), controller.signal)).resolves.toBe('done')
    await expect(raceAbort(Promise.reject(new Error('failed')), controller.signal)).rejects.toThrow('failed')
    expect(add).toHaveBeenCalledTimes(2)
    expect(remove.mock.calls.map((call) => call[1])).toEqual(add.mock.calls.map((call) => call[1]))
  })
})

describe('withTimeout and settledWithin', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('answers the promise when it settles first, and clears the timer', async () => {
    const onTimeout = vi.fn(() => 'late')
    const raced = withTimeout(Promise.resolve('early'), 1000, onTimeout)
    await expect(raced).resolves.toBe('early')
    expect(vi.getTimerCount()).toBe(0)
    await vi.advanceTimersByTimeAsync(2000)
    expect(onTimeout).not.toHaveBeenCalled()
  })

  it('passes on the promise rejection when it comes first, and clears the timer', async () => {
    const raced = withTimeout(Promise.reject(new Error('failed')), 1000, () => 'late')
    await expect(raced).rejects.toThrow('failed')
    expect(vi.getTimerCount()).toBe(0)
  })

  it("answers onTimeout's value, or its throw, once the time passed first", async () => {
    const fallback = withTimeout(new Promise<string>(() => {}), 1000, () => 'late')
    const thrown = withTimeout(new Promise<string>(() => {}), 1000, () => {
      throw new Error('too slow')
    })
    const caught = thrown.catch((error: unknown) => error)
    await vi.advanceTimersByTimeAsync(999)
    expect(vi.getTimerCount()).toBe(2)
    await vi.advanceTimersByTimeAsync(1)
    await expect(fallback).resolves.toBe('late')
    expect(await caught).toEqual(new Error('too slow'))
    expect(vi.getTimerCount()).toBe(0)
  })

  it('settledWithin resolves on either outcome of the promise, or after the time at most', async () => {
    await expect(settledWithin(Promise.reject(new Error('ignored')), 1000)).resolves.toBeUndefined()
    expect(vi.getTimerCount()).toBe(0)
    let done = false
    const waiting = settledWithin(new Promise(() => {}), 1000).then(() => {
      done = true
    })
    await vi.advanceTimersByTimeAsync(999)
    expect(done).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    await waiting
    expect(done).toBe(true)
  })
})
