import type { Context } from '@deepseek-ai/cordis'
import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from 'dsh-agent'
import * as policyPlugin from 'dsh-sandbox-policy'
import { type ModeChange, SandboxPolicyError } from 'dsh-sandbox-policy'
import { codeOf, scratchDir, setup } from './helpers'

let dir: Awaited<ReturnType<typeof scratchDir>> | undefined

afterEach(async () => {
  await dir?.remove()
  dir = undefined
})

/** Plain-value view of a change, so assertions never print an Agent's context. */
function seen(change: ModeChange): string {
  return `${change.owner.id}: ${change.from} -> ${change.to}`
}

/** Mount a throwaway plugin and return its context, to register listeners "as a plugin". */
async function pluginContext(root: Context) {
  let captured: Context | undefined
  const fiber = await root.plugin({
    name: 'listener-owner',
    inject: ['sandboxPolicy'],
    apply(ctx: Context) {
      captured = ctx
    },
  })
  return { ctx: captured as Context, fiber }
}

describe('resolve', () => {
  it('uses the owner session mode over the deployment default', async () => {
    dir = await scratchDir('resolve')
    const { root } = await setup({ mode: 'read-only', workspaceRoot: dir.path })
    const alice = await root.agents.create({ id: 'alice' })
    const bob = await root.agents.create({ id: 'bob' })
    expect(root.sandboxPolicy.resolve(alice)).toEqual({ mode: 'read-only', workspaceRoot: dir.path })
    expect(root.sandboxPolicy.setSessionMode(alice, 'danger-full-access')).toBe('danger-full-access')
    expect(root.sandboxPolicy.resolve(alice).mode).toBe('danger-full-access')
    expect(root.sandboxPolicy.resolve(bob).mode).toBe('read-only')
    expect(root.sandboxPolicy.sessionMode(alice)).toBe('danger-full-access')
    expect(root.sandboxPolicy.sessionMode(bob)).toBeUndefined()
  })

  it('refuses an owner that ended, and forgets its session mode', async () => {
    const { root } = await setup()
    const alice = await root.agents.create()
    root.sandboxPolicy.setSessionMode(alice, 'read-only')
    await alice.dispose()
    expect(root.sandboxPolicy.sessionMode(alice)).toBeUndefined()
    expect(codeOf(() => root.sandboxPolicy.resolve(alice))).toBe('OWNER_NOT_LIVE')
    expect(codeOf(() => root.sandboxPolicy.setSessionMode(alice, 'read-only'))).toBe('OWNER_NOT_LIVE')
    expect(codeOf(() => root.sandboxPolicy.onModeChange(() => {}, { owner: alice }))).toBe('OWNER_NOT_LIVE')
  })

  it('rejects an unknown mode', async () => {
    const { root } = await setup()
    const alice = await root.agents.create()
    expect(codeOf(() => root.sandboxPolicy.setSessionMode(alice, 'everything' as never))).toBe('INVALID_MODE')
  })

  it('starts fresh after the policy plugin reloads', async () => {
    const { root, policy } = await setup()
    const alice = await root.agents.create()
    root.sandboxPolicy.setSessionMode(alice, 'read-only')
    await policy.dispose()
    await root.plugin(policyPlugin, {})
    expect(root.sandboxPolicy.resolve(alice).mode).toBe('workspace-write')
  })
})

describe('mode changes', () => {
  it('shows listeners the effective modes before committing, and clears back to the default', async () => {
    const { root } = await setup({ mode: 'workspace-write' })
    const alice = await root.agents.create({ id: 'alice' })
    const changes: string[] = []
    root.sandboxPolicy.onModeChange((change) => {
      changes.push(`${seen(change)} (committed: ${root.sandboxPolicy.resolve(change.owner).mode})`)
    })
    root.sandboxPolicy.setSessionMode(alice, 'read-only')
    expect(root.sandboxPolicy.setSessionMode(alice, undefined)).toBe('workspace-write')
    expect(changes).toEqual(['alice: workspace-write -> read-only (committed: workspace-write)', 'alice: read-only -> workspace-write (committed: read-only)'])
    expect(root.sandboxPolicy.sessionMode(alice)).toBeUndefined()
  })

  it('a veto commits nothing and carries the listener message', async () => {
    const { root } = await setup()
    const alice = await root.agents.create()
    const refusal = new Error('close the terminals first')
    root.sandboxPolicy.onModeChange(() => {
      throw refusal
    })
    let error: unknown
    try {
      root.sandboxPolicy.setSessionMode(alice, 'danger-full-access')
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(SandboxPolicyError)
    expect((error as SandboxPolicyError).code).toBe('MODE_CHANGE_VETOED')
    expect((error as SandboxPolicyError).message).toBe('close the terminals first')
    expect((error as SandboxPolicyError).cause).toBe(refusal)
    expect(root.sandboxPolicy.resolve(alice).mode).toBe('workspace-write')
    expect(root.sandboxPolicy.sessionMode(alice)).toBeUndefined()
  })

  it('a write that keeps the effective mode commits without consulting listeners', async () => {
    const { root } = await setup({ mode: 'workspace-write' })
    const alice = await root.agents.create()
    let calls = 0
    root.sandboxPolicy.onModeChange(() => {
      calls++
      throw new Error('no changes allowed')
    })
    expect(root.sandboxPolicy.setSessionMode(alice, 'workspace-write')).toBe('workspace-write')
    expect(root.sandboxPolicy.sessionMode(alice)).toBe('workspace-write')
    expect(root.sandboxPolicy.setSessionMode(alice, undefined)).toBe('workspace-write')
    expect(calls).toBe(0)
  })

  it('an async listener cannot approve: its promise counts as a veto', async () => {
    const { root } = await setup()
    const alice = await root.agents.create()
    root.sandboxPolicy.onModeChange(async () => {})
    expect(codeOf(() => root.sandboxPolicy.setSessionMode(alice, 'read-only'))).toBe('MODE_CHANGE_VETOED')
    expect(root.sandboxPolicy.resolve(alice).mode).toBe('workspace-write')
  })

  it('a plugin-registered listener goes away with the plugin, or with its disposer', async () => {
    const { root } = await setup()
    const alice = await root.agents.create()
    const { ctx, fiber } = await pluginContext(root)
    const veto = () => {
      throw new Error('vetoed')
    }
    ctx.sandboxPolicy.onModeChange(veto)
    expect(codeOf(() => root.sandboxPolicy.setSessionMode(alice, 'read-only'))).toBe('MODE_CHANGE_VETOED')
    await fiber.dispose()
    expect(root.sandboxPolicy.setSessionMode(alice, 'read-only')).toBe('read-only')
    const dispose = root.sandboxPolicy.onModeChange(veto)
    expect(codeOf(() => root.sandboxPolicy.setSessionMode(alice, 'workspace-write'))).toBe('MODE_CHANGE_VETOED')
    dispose()
    expect(root.sandboxPolicy.setSessionMode(alice, 'workspace-write')).toBe('workspace-write')
  })
})

describe('owner-bound listeners', () => {
  it('see only their owner, outlive the registering plugin, and end with the owner', async () => {
    const { root } = await setup()
    const alice = await root.agents.create({ id: 'alice' })
    const bob = await root.agents.create({ id: 'bob' })
    const { ctx, fiber } = await pluginContext(root)
    const changes: string[] = []
    ctx.sandboxPolicy.onModeChange((change) => changes.push(seen(change)), { owner: alice })
    root.sandboxPolicy.setSessionMode(bob, 'read-only')
    await fiber.dispose()
    root.sandboxPolicy.setSessionMode(alice, 'read-only')
    expect(changes).toEqual(['alice: workspace-write -> read-only'])
    await alice.dispose()
    const again = await root.agents.create({ id: 'alice' })
    root.sandboxPolicy.setSessionMode(again, 'read-only')
    expect(changes).toHaveLength(1)
  })

  it('a registration with the same key replaces the previous one; the disposer removes it', async () => {
    const { root } = await setup()
    const alice = await root.agents.create()
    const calls: string[] = []
    root.sandboxPolicy.onModeChange(() => calls.push('first'), { owner: alice, key: 'fence' })
    const dispose = root.sandboxPolicy.onModeChange(() => calls.push('second'), { owner: alice, key: 'fence' })
    root.sandboxPolicy.setSessionMode(alice, 'read-only')
    expect(calls).toEqual(['second'])
    dispose()
    root.sandboxPolicy.setSessionMode(alice, undefined)
    expect(calls).toEqual(['second'])
  })
})

describe('the fence a terminal backend builds from it', () => {
  /** Stands in for ctx.terminals.hasOwnerActivity: owners with open or spawning sessions. */
  function fence(root: Context, active: Set<Agent>, owner: Agent) {
    root.sandboxPolicy.onModeChange(
      ({ owner: changing }) => {
        if (active.has(changing)) {
          throw new Error(
            'cannot change sandbox mode while persistent terminal sessions are open or being created; wait for creation to settle and close them first',
          )
        }
      },
      { owner, key: 'dsh-terminal-bash' },
    )
  }

  it('rejects a widening and a narrowing while active, allows a same-mode write, and any change after', async () => {
    const { root } = await setup({ mode: 'workspace-write' })
    const alice = await root.agents.create()
    const active = new Set<Agent>([alice])
    fence(root, active, alice)
    expect(codeOf(() => root.sandboxPolicy.setSessionMode(alice, 'danger-full-access'))).toBe('MODE_CHANGE_VETOED')
    expect(codeOf(() => root.sandboxPolicy.setSessionMode(alice, 'read-only'))).toBe('MODE_CHANGE_VETOED')
    expect(() => root.sandboxPolicy.setSessionMode(alice, 'read-only')).toThrow(/wait for creation to settle/)
    expect(root.sandboxPolicy.setSessionMode(alice, 'workspace-write')).toBe('workspace-write')
    expect(root.sandboxPolicy.resolve(alice).mode).toBe('workspace-write')
    active.delete(alice)
    expect(root.sandboxPolicy.setSessionMode(alice, 'read-only')).toBe('read-only')
  })
})
