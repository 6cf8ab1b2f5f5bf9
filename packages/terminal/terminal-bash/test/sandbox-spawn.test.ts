import { realpathSync } from 'node:fs'
import { mkdtemp, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SandboxMode } from 'dsh-sandbox'
import { SandboxError } from 'dsh-sandbox'
import * as policyPlugin from 'dsh-sandbox-policy'
import { Deferred } from 'dsh-testkit'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { MODE_FENCE_MESSAGE } from '../src/internal'
import { pythonStartupFile } from '../src/repl/python-startup'
import { marker } from './support/fake-terminal'
import { type FakeSandboxing, type FakeStack, nonceOf, startFakeStack } from './support/fake-runtime'

let stack: FakeStack | undefined
let workspace = ''

beforeAll(async () => {
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'dsh-bash-policy-')))
})
afterEach(async () => {
  await stack?.dispose()
  stack = undefined
})
afterAll(async () => {
  await rm(workspace, { recursive: true, force: true })
})

const BASH = ['bash', '--noprofile', '--norc', '-i']

function sandboxed(mode: SandboxMode, sandbox = true): FakeSandboxing {
  return { policy: { mode, workspaceRoot: workspace }, sandbox }
}

/** Try a session-mode write; report what happened as plain data. */
function modeWrite(target: FakeStack, mode: SandboxMode | undefined): string {
  try {
    return `committed ${target.root.sandboxPolicy.setSessionMode(target.agent, mode)}`
  } catch (error) {
    const { code, message } = error as { code?: string; message: string }
    return `${code}: ${message}`
  }
}

const VETOED = `MODE_CHANGE_VETOED: ${MODE_FENCE_MESSAGE}`

/** Yield to the event loop until `check` holds (the fakes settle within a few turns). */
async function turns(check: () => boolean): Promise<void> {
  for (let turn = 0; !check(); turn++) {
    if (turn > 1000) throw new Error('the fake stack did not get there')
    await new Promise((resolve) => setImmediate(resolve))
  }
}

describe('the owner policy decides how the shell starts', () => {
  it('a confined mode wraps the shell argv once, with the workspace and the canonical cwd', async () => {
    stack = await startFakeStack({}, sandboxed('workspace-write'))
    await stack.terminals.spawn(stack.agent, { type: 'shell' })
    // Python's marking startup file ships in the package: the sandbox is asked to show it, read-only.
    const startup = pythonStartupFile()!
    expect(startup).toBe(realpathSync(startup))
    expect(stack.sandbox!.requests).toEqual([
      { argv: BASH, policy: { mode: 'workspace-write', workspaceRoot: workspace, cwd: workspace, readableFiles: [startup] } },
    ])
    expect(stack.runtime.specs[0]).toMatchObject({ argv: ['fake-jail', 'workspace-write', '--', ...BASH], cwd: workspace })
    expect(stack.runtime.specs[0]?.env).toMatchObject({ PYTHONSTARTUP: startup })
  })

  it('the owner session mode wins over the deployment default; danger-full-access never reaches the sandbox', async () => {
    stack = await startFakeStack({}, sandboxed('workspace-write'))
    stack.root.sandboxPolicy.setSessionMode(stack.agent, 'read-only')
    const confined = await stack.terminals.spawn(stack.agent, { type: 'shell' })
    expect(stack.runtime.specs[0]?.argv.slice(0, 2)).toEqual(['fake-jail', 'read-only'])
    await stack.terminals.close(stack.agent, confined.sessionId)
    stack.root.sandboxPolicy.setSessionMode(stack.agent, 'danger-full-access')
    await stack.terminals.spawn(stack.agent, { type: 'shell' })
    expect(stack.runtime.specs[1]?.argv).toEqual(BASH)
    expect(stack.sandbox!.requests).toHaveLength(1)
  })

  it('danger-full-access needs no sandbox provider', async () => {
    stack = await startFakeStack({}, sandboxed('danger-full-access', false))
    await stack.terminals.spawn(stack.agent, { type: 'shell' })
    expect(stack.runtime.specs[0]?.argv).toEqual(BASH)
  })

  it('a confined mode without ctx.sandbox fails closed before anything is spawned', async () => {
    stack = await startFakeStack({}, sandboxed('workspace-write', false))
    await expect(stack.terminals.spawn(stack.agent, { type: 'shell' })).rejects.toMatchObject({
      name: 'ShellBackendError',
      code: 'SANDBOX_REQUIRED',
      message: expect.stringMatching(/^sandbox mode workspace-write needs a ctx\.sandbox provider in this context \(mount dsh-sandbox-local\)/),
    })
    expect(stack.runtime.specs).toEqual([])
    expect(stack.terminals.hasOwnerActivity(stack.agent)).toBe(false)
  })

  it('an empty confined argv is an error, and a provider refusal propagates unchanged', async () => {
    stack = await startFakeStack({}, sandboxed('read-only'))
    stack.sandbox!.confineWith = async () => []
    await expect(stack.terminals.spawn(stack.agent, { type: 'shell' })).rejects.toMatchObject({ code: 'SANDBOX_INVALID_ARGV' })
    const refusal = new SandboxError('SANDBOX_UNAVAILABLE', 'bwrap not found: install bubblewrap')
    stack.sandbox!.confineWith = async () => {
      throw refusal
    }
    await expect(stack.terminals.spawn(stack.agent, { type: 'shell' })).rejects.toBe(refusal)
    expect(stack.runtime.specs).toEqual([])
  })

  it('the cwd defaults to the workspace root, resolves against it, and may not leave it under a confined mode', async () => {
    stack = await startFakeStack({}, sandboxed('workspace-write'))
    await expect(stack.terminals.spawn(stack.agent, { type: 'shell', cwd: '..' })).rejects.toMatchObject({ code: 'CWD_OUTSIDE_WORKSPACE' })
    await expect(stack.terminals.spawn(stack.agent, { type: 'shell', cwd: 'missing' })).rejects.toMatchObject({
      code: 'INVALID_CWD',
      message: `PTY working directory ${JSON.stringify(join(workspace, 'missing'))} does not exist`,
    })
    await expect(stack.terminals.spawn(stack.agent, { type: 'shell', cwd: '' })).rejects.toMatchObject({ code: 'INVALID_CWD' })
    expect(stack.runtime.specs).toEqual([])
    await stack.terminals.spawn(stack.agent, { type: 'shell', cwd: '.' })
    expect(stack.runtime.specs[0]?.cwd).toBe(workspace)
  })
})

describe('the mode fence', () => {
  it('rejects a widening and a narrowing while a session is open, allows a same-mode write, and any change after close', async () => {
    stack = await startFakeStack({}, sandboxed('workspace-write'))
    const { sessionId } = await stack.terminals.spawn(stack.agent, { type: 'shell' })
    expect(modeWrite(stack, 'danger-full-access')).toBe(VETOED)
    expect(modeWrite(stack, 'read-only')).toBe(VETOED)
    expect(modeWrite(stack, 'workspace-write')).toBe('committed workspace-write')
    expect(modeWrite(stack, undefined)).toBe('committed workspace-write')
    await stack.terminals.close(stack.agent, sessionId)
    expect(modeWrite(stack, 'read-only')).toBe('committed read-only')
    expect(modeWrite(stack, 'danger-full-access')).toBe('committed danger-full-access')
  })

  it('rejects both directions while a spawn is still being set up, in every phase until it settles', async () => {
    stack = await startFakeStack({}, sandboxed('workspace-write'))
    const target = stack
    // Phase 1: the sandbox provider has not answered yet.
    const confining = new Deferred<string[]>()
    target.sandbox!.confineWith = () => confining.promise
    const first = target.terminals.spawn(target.agent, { type: 'shell' })
    await turns(() => target.sandbox!.requests.length === 1)
    expect([modeWrite(target, 'danger-full-access'), modeWrite(target, 'read-only')]).toEqual([VETOED, VETOED])
    // Phase 2: the PTY is being allocated.
    const allocating = new Deferred()
    target.runtime.beforeSpawn = () => allocating.promise
    confining.resolve(['fake-jail', '--', ...BASH])
    await turns(() => target.runtime.specs.length === 1)
    expect([modeWrite(target, 'danger-full-access'), modeWrite(target, 'read-only')]).toEqual([VETOED, VETOED])
    // Phase 3: startup waits for the prompt.
    target.runtime.printPrompt = false
    allocating.resolve()
    await turns(() => target.runtime.terminals.length === 1)
    expect([modeWrite(target, 'danger-full-access'), modeWrite(target, 'read-only')]).toEqual([VETOED, VETOED])
    expect(modeWrite(target, 'workspace-write')).toBe('committed workspace-write')
    target.runtime.terminals[0]!.emit(`${marker(0, nonceOf(target.runtime.specs[0]!))}dsh> `)
    const opened = await first
    expect(modeWrite(target, 'read-only')).toBe(VETOED)
    await target.terminals.close(target.agent, opened.sessionId)
    expect(modeWrite(target, 'read-only')).toBe('committed read-only')
  })

  it('a spawn that failed leaves no fence behind', async () => {
    stack = await startFakeStack({}, sandboxed('workspace-write'))
    stack.sandbox!.confineWith = async () => {
      throw new SandboxError('SANDBOX_UNAVAILABLE', 'no bwrap')
    }
    await expect(stack.terminals.spawn(stack.agent, { type: 'shell' })).rejects.toMatchObject({ code: 'SANDBOX_UNAVAILABLE' })
    expect(modeWrite(stack, 'danger-full-access')).toBe('committed danger-full-access')
  })

  it('fences only the owner with sessions', async () => {
    stack = await startFakeStack({}, sandboxed('workspace-write'))
    await stack.terminals.spawn(stack.agent, { type: 'shell' })
    const other = await stack.root.agents.create()
    expect(stack.root.sandboxPolicy.setSessionMode(other, 'danger-full-access')).toBe('danger-full-access')
    expect(modeWrite(stack, 'danger-full-access')).toBe(VETOED)
  })

  it('outlives an unload of the backend plugin while its sessions stay open', async () => {
    stack = await startFakeStack({}, sandboxed('workspace-write'))
    const { sessionId } = await stack.terminals.spawn(stack.agent, { type: 'shell' })
    await stack.backendFiber.dispose()
    expect(stack.terminals.listBackends()).toEqual([])
    expect(modeWrite(stack, 'danger-full-access')).toBe(VETOED)
    await stack.terminals.close(stack.agent, sessionId)
    expect(modeWrite(stack, 'danger-full-access')).toBe('committed danger-full-access')
  })

  it('still holds after the policy plugin was reloaded under an open session', async () => {
    stack = await startFakeStack({}, sandboxed('workspace-write'))
    const { sessionId } = await stack.terminals.spawn(stack.agent, { type: 'shell' })
    await stack.policyFiber.dispose()
    const reloaded = await stack.root.plugin(policyPlugin, { mode: 'workspace-write', workspaceRoot: workspace })
    try {
      expect(stack.terminals.listBackends()).toEqual(['shell'])
      expect(modeWrite(stack, 'read-only')).toBe(VETOED)
      await stack.terminals.close(stack.agent, sessionId)
      expect(modeWrite(stack, 'read-only')).toBe('committed read-only')
    } finally {
      await reloaded.dispose()
    }
  })
})
