import { describe, expect, it } from 'vitest'
import { Deferred } from '../src/index'

describe('Deferred', () => {
  it('stays pending until the test resolves it, then keeps the first value', async () => {
    const gate = new Deferred<string>()
    let settled: string | undefined
    void gate.promise.then((value) => (settled = value))
    await new Promise<void>((resolve) => setImmediate(resolve))
    expect(settled).toBeUndefined()
    gate.resolve('first')
    gate.resolve('second')
    expect(await gate.promise).toBe('first')
  })

  it('rejects with the reason the test gives', async () => {
    const gate = new Deferred()
    gate.reject(new Error('refused'))
    await expect(gate.promise).rejects.toThrow('refused')
  })
})
