import { Context } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import { assertConfineRequest, isConfinedMode, isSandboxMode, Sandbox, SandboxError, SandboxModeSchema, type SandboxPolicy } from 'dsh-sandbox'

/** A provider that records what it was asked and prefixes a marker, to exercise the seam. */
class EchoSandbox extends Sandbox {
  readonly calls: string[][] = []

  async confine(argv: readonly string[], policy: SandboxPolicy): Promise<string[]> {
    assertConfineRequest(argv, policy)
    this.calls.push([...argv])
    return ['confined', policy.mode, ...argv]
  }
}

class OtherSandbox extends EchoSandbox {}

const policy: SandboxPolicy = { mode: 'read-only', workspaceRoot: '/work' }

function codeOf(run: () => void): string | undefined {
  try {
    run()
  } catch (error) {
    return error instanceof SandboxError ? error.code : `not a SandboxError: ${String(error)}`
  }
  return undefined
}

describe('dsh-sandbox seam', () => {
  it('provides ctx.sandbox and lets consumers inject it', async () => {
    const root = new Context()
    await root.plugin(EchoSandbox)
    let seen: string[] | undefined
    await root.plugin({
      name: 'consumer',
      inject: ['sandbox'],
      async apply(ctx: Context) {
        seen = await ctx.sandbox.confine(['bash', '-i'], policy)
      },
    })
    expect(seen).toEqual(['confined', 'read-only', 'bash', '-i'])
  })

  it('refuses a second provider in the same context', async () => {
    const root = new Context()
    await root.plugin(EchoSandbox)
    const error = await Promise.resolve(root.plugin(OtherSandbox)).then(
      () => undefined,
      (caught: unknown) => String(caught),
    )
    expect(error).toMatch(/service "sandbox" has been registered/)
    expect(root.get('sandbox') instanceof OtherSandbox).toBe(false)
  })

  it('accepts a new provider once the previous one unloads', async () => {
    const root = new Context()
    const first = await root.plugin(EchoSandbox)
    await first.dispose()
    expect(root.get('sandbox')).toBeUndefined()
    await root.plugin(OtherSandbox)
    expect(root.get('sandbox') instanceof OtherSandbox).toBe(true)
  })

  it('rejects malformed requests with stable codes', () => {
    expect(codeOf(() => assertConfineRequest([], policy))).toBe('EMPTY_ARGV')
    expect(codeOf(() => assertConfineRequest([''], policy))).toBe('EMPTY_ARGV')
    expect(codeOf(() => assertConfineRequest(['a\0b'], policy))).toBe('INVALID_ARGV')
    expect(codeOf(() => assertConfineRequest([42 as unknown as string], policy))).toBe('INVALID_ARGV')
    const full = { mode: 'danger-full-access', workspaceRoot: '/work' } as unknown as SandboxPolicy
    expect(codeOf(() => assertConfineRequest(['sh'], full))).toBe('INVALID_POLICY')
    const unknown = { mode: 'write-all', workspaceRoot: '/work' } as unknown as SandboxPolicy
    expect(codeOf(() => assertConfineRequest(['sh'], unknown))).toBe('INVALID_POLICY')
    expect(codeOf(() => assertConfineRequest(['sh'], { mode: 'read-only', workspaceRoot: 'work' }))).toBe('INVALID_POLICY')
    expect(codeOf(() => assertConfineRequest(['sh'], { ...policy, cwd: 'sub' }))).toBe('INVALID_POLICY')
    expect(codeOf(() => assertConfineRequest(['sh'], null as unknown as SandboxPolicy))).toBe('INVALID_POLICY')
    expect(codeOf(() => assertConfineRequest(['sh', ''], { ...policy, mode: 'workspace-write', cwd: '/work/sub' }))).toBeUndefined()
  })

  it('accepts readable files only as a list of absolute paths', () => {
    expect(codeOf(() => assertConfineRequest(['sh'], { ...policy, readableFiles: ['/opt/tool/startup.py'] }))).toBeUndefined()
    expect(codeOf(() => assertConfineRequest(['sh'], { ...policy, readableFiles: [] }))).toBeUndefined()
    expect(codeOf(() => assertConfineRequest(['sh'], { ...policy, readableFiles: ['startup.py'] }))).toBe('INVALID_POLICY')
    expect(codeOf(() => assertConfineRequest(['sh'], { ...policy, readableFiles: ['/a\0b'] }))).toBe('INVALID_POLICY')
    expect(codeOf(() => assertConfineRequest(['sh'], { ...policy, readableFiles: [7 as unknown as string] }))).toBe('INVALID_POLICY')
    const notList = { ...policy, readableFiles: '/opt/tool/startup.py' } as unknown as SandboxPolicy
    expect(() => assertConfineRequest(['sh'], notList)).toThrow(/readableFiles must be a list/)
  })

  it('names danger-full-access as the reason it refuses it', () => {
    const full = { mode: 'danger-full-access', workspaceRoot: '/work' } as unknown as SandboxPolicy
    expect(() => assertConfineRequest(['sh'], full)).toThrow(/start the process directly/)
  })

  it('classifies modes', () => {
    expect(isSandboxMode('read-only')).toBe(true)
    expect(isSandboxMode('danger-full-access')).toBe(true)
    expect(isSandboxMode('full')).toBe(false)
    expect(isSandboxMode(undefined)).toBe(false)
    expect(isConfinedMode('workspace-write')).toBe(true)
    expect(isConfinedMode('danger-full-access')).toBe(false)
    expect(SandboxModeSchema.safeParse('read-only').success).toBe(true)
    expect(SandboxModeSchema.safeParse('rw').success).toBe(false)
  })
})
