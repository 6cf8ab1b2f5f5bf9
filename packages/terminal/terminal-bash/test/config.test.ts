import { describe, expect, it } from 'vitest'
import { MAX_TIMER_MS } from 'dsh-basics'
import { Config, parseConfig } from '../src/config'

describe('config', () => {
  it('defaults to the reference values', () => {
    expect(parseConfig()).toEqual({
      rows: 40,
      cols: 160,
      scrollbackLines: 10_000,
      scrollbackMaxBytes: 4_194_304,
      maxReadBytes: 262_144,
      pollIntervalMs: 50,
      exactProbeAfterMs: 150,
      idleSilenceMs: 3_000,
      handoffGraceMs: 500,
      timeoutMs: 30_000,
      disposeGraceMs: 3_000,
      cancelGraceMs: 500,
      shellPath: '',
      shellArgs: [],
      maxProcesses: 1024,
      maxMemoryBytes: 8 * 1024 ** 3,
      warmSandbox: false,
    })
    expect(Config.parse(undefined)).toEqual(parseConfig({}))
  })

  it.each([
    ['rows', 0],
    ['cols', 65_536],
    ['scrollbackLines', 1.5],
    ['scrollbackMaxBytes', -1],
    ['maxReadBytes', 2 ** 53],
    ['pollIntervalMs', 0],
    ['idleSilenceMs', MAX_TIMER_MS + 1],
    ['timeoutMs', Number.NaN],
    ['disposeGraceMs', '3000'],
    ['cancelGraceMs', 0],
    ['exactProbeAfterMs', Number.POSITIVE_INFINITY],
    ['maxProcesses', -1],
    ['maxProcesses', 1.5],
    ['maxMemoryBytes', 2 ** 53],
    ['maxMemoryBytes', null],
  ])('rejects %s = %s', (key, value) => {
    expect(Config.safeParse({ [key]: value }).success).toBe(false)
  })

  it('accepts the largest timer', () => {
    expect(parseConfig({ timeoutMs: MAX_TIMER_MS, idleSilenceMs: MAX_TIMER_MS }).timeoutMs).toBe(MAX_TIMER_MS)
  })

  it('requires handoffGraceMs ≥ pollIntervalMs', () => {
    const result = Config.safeParse({ pollIntervalMs: 100, handoffGraceMs: 99 })
    expect(result.error?.issues.map((issue) => [issue.path.join('.'), issue.message])).toEqual([
      ['handoffGraceMs', 'handoffGraceMs (99) must be at least pollIntervalMs (100)'],
    ])
    expect(parseConfig({ pollIntervalMs: 100, handoffGraceMs: 100 }).handoffGraceMs).toBe(100)
  })

  it('requires cancelGraceMs ≥ 2 × pollIntervalMs (the prompt after a cancel must hold still first)', () => {
    const result = Config.safeParse({ pollIntervalMs: 100, handoffGraceMs: 500, cancelGraceMs: 199 })
    expect(result.error?.issues.map((issue) => [issue.path.join('.'), issue.message])).toEqual([
      [
        'cancelGraceMs',
        'cancelGraceMs (199) must be at least twice pollIntervalMs (100): the prompt after a cancelling SIGINT must hold still for pollIntervalMs before it counts',
      ],
    ])
    expect(parseConfig({ pollIntervalMs: 100, cancelGraceMs: 200 }).cancelGraceMs).toBe(200)
  })

  it('requires maxReadBytes ≤ scrollbackMaxBytes', () => {
    const result = Config.safeParse({ scrollbackMaxBytes: 1_000, maxReadBytes: 1_001 })
    expect(result.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['maxReadBytes'])
  })

  it('takes 0 for a cap as "no cap"', () => {
    expect(parseConfig({ maxProcesses: 0, maxMemoryBytes: 0 })).toMatchObject({ maxProcesses: 0, maxMemoryBytes: 0 })
  })

  it('takes shellPath and shellArgs, refusing NUL bytes', () => {
    expect(parseConfig({ shellPath: '/bin/bash', shellArgs: ['-i'] })).toMatchObject({ shellPath: '/bin/bash', shellArgs: ['-i'] })
    expect(Config.safeParse({ shellArgs: ['a\0b'] }).success).toBe(false)
  })
})
