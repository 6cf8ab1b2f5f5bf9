import { describe, expect, it } from 'vitest'
import { waitTimeoutMs } from '../src/linux/wait-timeout'

/** `{int64 seconds; int64 fraction}`, as a timeval or timespec sits in memory. */
function pair(seconds: bigint, fraction: bigint): Buffer {
  const bytes = Buffer.alloc(16)
  bytes.writeBigInt64LE(seconds, 0)
  bytes.writeBigInt64LE(fraction, 8)
  return bytes
}

/** A memory reader holding `bytes` at `address` only. */
function memoryWith(address: number, bytes: Buffer) {
  return (at: number, length: number) => (at === address && length <= bytes.length ? bytes.subarray(0, length) : undefined)
}
const NO_MEMORY = () => undefined

describe('waitTimeoutMs', () => {
  it('reads the int milliseconds of poll and epoll_wait from the low 32 bits, negative meaning none', () => {
    expect(waitTimeoutMs('poll', [0x5000n, 1n, 1500n], NO_MEMORY)).toBe(1500)
    expect(waitTimeoutMs('poll', [0x5000n, 1n, 0xffffffffn], NO_MEMORY)).toBeUndefined()
    expect(waitTimeoutMs('poll', [0x5000n, 1n, 0xffffffffffffffffn], NO_MEMORY)).toBeUndefined()
    expect(waitTimeoutMs('epoll_wait', [4n, 0x5000n, 8n, 100n], NO_MEMORY)).toBe(100)
    expect(waitTimeoutMs('epoll_pwait', [4n, 0x5000n, 8n, 0xffffffffn], NO_MEMORY)).toBeUndefined()
  })

  it('reads a timeval for select and a timespec for pselect6, ppoll and epoll_pwait2, rounding up', () => {
    const timeval = memoryWith(0x7000, pair(1n, 500_000n))
    expect(waitTimeoutMs('select', [1n, 0x6000n, 0n, 0n, 0x7000n], timeval)).toBe(1500)
    const timespec = memoryWith(0x7000, pair(0n, 100_000_001n))
    expect(waitTimeoutMs('pselect6', [1n, 0x6000n, 0n, 0n, 0x7000n, 0n], timespec)).toBe(101)
    expect(waitTimeoutMs('ppoll', [0x6000n, 1n, 0x7000n], timespec)).toBe(101)
    expect(waitTimeoutMs('epoll_pwait2', [4n, 0x6000n, 8n, 0x7000n], timespec)).toBe(101)
  })

  it('has none for read, a null pointer, unreadable memory or a malformed or huge value', () => {
    expect(waitTimeoutMs('read', [0n, 0x6000n, 1n], NO_MEMORY)).toBeUndefined()
    expect(waitTimeoutMs('pselect6', [1n, 0x6000n, 0n, 0n, 0n, 0n], NO_MEMORY)).toBeUndefined()
    expect(waitTimeoutMs('pselect6', [1n, 0x6000n, 0n, 0n, 0x7000n, 0n], NO_MEMORY)).toBeUndefined()
    expect(waitTimeoutMs('ppoll', [0x6000n, 1n, 0x7000n], memoryWith(0x7000, pair(0n, 1_000_000_000n)))).toBeUndefined()
    expect(waitTimeoutMs('ppoll', [0x6000n, 1n, 0x7000n], memoryWith(0x7000, pair(-1n, 0n)))).toBeUndefined()
    expect(waitTimeoutMs('ppoll', [0x6000n, 1n, 0x7000n], memoryWith(0x7000, pair(10n ** 9n, 0n)))).toBeUndefined()
  })
})
