import { describe, expect, it } from 'vitest'
import { eventually } from '../src/index'

describe('eventually', () => {
  it('returns the first answer that is neither undefined nor false, including 0', async () => {
    let calls = 0
    expect(await eventually(() => (++calls < 3 ? undefined : 0), 'a zero')).toBe(0)
    expect(calls).toBe(3)
  })

  it('polls an async probe', async () => {
    let calls = 0
    expect(await eventually(async () => ++calls >= 2 && 'done', 'an async answer')).toBe('done')
  })

  it('throws naming what it waited for once the deadline passed', async () => {
    await expect(eventually(() => false, 'the impossible', 20)).rejects.toThrow('timed out waiting for the impossible')
  })
})
