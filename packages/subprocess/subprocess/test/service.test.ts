import { Context } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import {
  isSubprocessError,
  SubprocessError,
  SubprocessRuntime,
  type SubprocessTerminalHandle,
  TerminalCleanupError,
  type TerminalSpawnSpec,
  MAX_TERMINAL_FACTS_BYTES,
  validateSpawnSpec,
  validateTerminalFacts,
  validateTerminalSize,
} from 'dsh-subprocess'

class FakeRuntime extends SubprocessRuntime {
  spawned: TerminalSpawnSpec[] = []
  async spawnTerminal(spec: TerminalSpawnSpec): Promise<SubprocessTerminalHandle> {
    this.spawned.push(spec)
    throw new SubprocessError('SPAWN_FAILED', 'fake runtime')
  }
}

const spec: TerminalSpawnSpec = { argv: ['bash'], cwd: '/tmp', rows: 24, cols: 80, graceMs: 100 }

describe('SubprocessRuntime', () => {
  it('is provided as ctx.subprocess', async () => {
    const root = new Context()
    await root.plugin(FakeRuntime)
    expect(root.subprocess).toBeInstanceOf(SubprocessRuntime)
    await expect(root.subprocess.spawnTerminal(spec)).rejects.toMatchObject({ code: 'SPAWN_FAILED' })
  })

  it('refuses a second provider in the same context', async () => {
    const root = new Context()
    await root.plugin(FakeRuntime)
    class Other extends FakeRuntime {}
    await expect(root.plugin(Other)).rejects.toThrow(/service "subprocess" has been registered/)
  })

  it('frees the name when the provider unloads', async () => {
    const root = new Context()
    const fiber = await root.plugin(FakeRuntime)
    await fiber.dispose()
    await expect(root.plugin(FakeRuntime)).resolves.toBeDefined()
  })
})

describe('validateSpawnSpec', () => {
  const bad: Array<[string, Partial<TerminalSpawnSpec> | Record<string, unknown>]> = [
    ['empty argv', { argv: [] }],
    ['non-string argv', { argv: ['bash', 3] as unknown as string[] }],
    ['empty executable', { argv: [''] }],
    ['NUL in argv', { argv: ['bash', 'a\0b'] }],
    ['relative cwd', { cwd: 'tmp' }],
    ['bad env name', { env: { 'A=B': 'x' } }],
    ['non-string env value', { env: { A: 1 as unknown as string } }],
    ['zero rows', { rows: 0 }],
    ['fractional cols', { cols: 80.5 }],
    ['huge cols', { cols: 70_000 }],
    ['negative grace', { graceMs: -1 }],
    ['grace beyond a timer', { graceMs: 2 ** 31 }],
    ['non-signal', { signal: {} as AbortSignal }],
    ['null limits', { limits: null }],
    ['zero maxProcesses', { limits: { maxProcesses: 0 } }],
    ['fractional maxMemoryBytes', { limits: { maxMemoryBytes: 1.5 } }],
    ['unsafe maxMemoryBytes', { limits: { maxMemoryBytes: 2 ** 53 } }],
    ['string maxProcesses', { limits: { maxProcesses: '64' } }],
  ]
  it.each(bad)('rejects %s with INVALID_SPEC', (_label, patch) => {
    const error = (() => {
      try {
        validateSpawnSpec({ ...spec, ...patch } as TerminalSpawnSpec)
      } catch (caught) {
        return caught
      }
    })()
    expect(isSubprocessError(error, 'INVALID_SPEC')).toBe(true)
  })

  it('accepts a complete spec, env overrides with undefined, and an AbortSignal', () => {
    expect(() => validateSpawnSpec({ ...spec, env: { TERM: 'dumb', PATH: undefined }, signal: new AbortController().signal })).not.toThrow()
    expect(() => validateTerminalSize(1, 65_535)).not.toThrow()
  })

  it('accepts limits of positive integers, each optional', () => {
    expect(() => validateSpawnSpec({ ...spec, limits: { maxProcesses: 64, maxMemoryBytes: 2 ** 33 } })).not.toThrow()
    expect(() => validateSpawnSpec({ ...spec, limits: { maxProcesses: undefined } })).not.toThrow()
    expect(() => validateSpawnSpec({ ...spec, limits: {} })).not.toThrow()
  })

  it('names the bad limit and what to use instead', () => {
    expect(() => validateSpawnSpec({ ...spec, limits: { maxProcesses: -1 } })).toThrow(
      'limits.maxProcesses must be a positive integer (or left out for no limit), got -1',
    )
    expect(() => validateSpawnSpec({ ...spec, limits: { maxMemory: 10 } as never })).toThrow(
      'limits.maxMemory is not a known limit; use maxProcesses or maxMemoryBytes',
    )
  })
})

describe('errors', () => {
  it('lists survivors and carries a stable code', () => {
    const error = new TerminalCleanupError([12, 34])
    expect(error.message).toBe('terminal cleanup failed; surviving pids: 12, 34')
    expect(error.code).toBe('CLEANUP_FAILED')
    expect(error.survivors).toEqual([12, 34])
    expect(isSubprocessError(error, 'CLEANUP_FAILED')).toBe(true)
    expect(isSubprocessError(new Error('x'))).toBe(false)
  })
})

describe('durable specs and facts', () => {
  const durable = { key: 'pty-3', ttlMs: 60_000, retainBytes: 65_536 }
  it('accepts a well-formed durable spec', () => {
    expect(() => validateSpawnSpec({ ...spec, durable })).not.toThrow()
  })

  it.each([
    ['a missing key', { ...durable, key: '' }],
    ['a key with NUL', { ...durable, key: 'a\0b' }],
    ['a key too long', { ...durable, key: 'k'.repeat(257) }],
    ['a zero TTL', { ...durable, ttlMs: 0 }],
    ['a TTL beyond a timer', { ...durable, ttlMs: 2 ** 31 }],
    ['a fractional retain bound', { ...durable, retainBytes: 1.5 }],
    ['no retain bound', { ...durable, retainBytes: 0 }],
    ['not an object', 'pty-3'],
  ])('refuses %s with INVALID_SPEC', (_label, bad) => {
    expect(() => validateSpawnSpec({ ...spec, durable: bad as never })).toThrow(expect.objectContaining({ code: 'INVALID_SPEC' }))
  })

  it('facts are bounded by MAX_TERMINAL_FACTS_BYTES counted in UTF-8 bytes, not characters', () => {
    expect(() => validateTerminalFacts('x'.repeat(MAX_TERMINAL_FACTS_BYTES))).not.toThrow()
    expect(() => validateTerminalFacts('x'.repeat(MAX_TERMINAL_FACTS_BYTES + 1))).toThrow(expect.objectContaining({ code: 'INVALID_SPEC' }))
    // 'é' is two UTF-8 bytes: half as many characters already reach the bound.
    expect(() => validateTerminalFacts('é'.repeat(MAX_TERMINAL_FACTS_BYTES / 2 + 1))).toThrow(expect.objectContaining({ code: 'INVALID_SPEC' }))
  })
})
