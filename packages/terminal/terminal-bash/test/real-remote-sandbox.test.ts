import { randomBytes } from 'node:crypto'
import { mkdtemp, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hostRuntimeDir } from 'dsh-sandbox'
import { probeBwrap } from 'dsh-sandbox-local/internal'
import * as remotePlugin from 'dsh-subprocess-remote'
import { descendants, eventually, isAlive, processName } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from './support/stack'

/** Why real-bwrap tests cannot run here; on CI bwrap is installed, so there it must work. */
const bwrapUnavailable = await probeBwrap('bwrap').then(
  () => undefined,
  (error: unknown) => (error instanceof Error ? error.message : String(error)),
)
if (bwrapUnavailable !== undefined && process.env.CI) throw new Error(`bubblewrap must work on CI: ${bwrapUnavailable}`)

const socketPath = join(hostRuntimeDir(process.getuid?.() ?? -1), `test-bash-sandbox-${randomBytes(6).toString('hex')}`, 'session-host.sock')
let workspace = ''
let stack: Stack | undefined
let sessionHostPid: number | undefined

beforeAll(async () => {
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'dsh-bash-remote-sandbox-')))
})
afterAll(async () => {
  await stack?.dispose()
  if (sessionHostPid) await eventually(() => !isAlive(sessionHostPid!), 'the idle session host to exit')
  await rm(workspace, { recursive: true, force: true })
  await rm(join(socketPath, '..'), { recursive: true, force: true })
})

describe.skipIf(bwrapUnavailable !== undefined)('a sandboxed shell run by the session host (real bubblewrap)', () => {
  it('is confined (wrapped on the client, run by the session host) and cannot see the session host socket', async () => {
    stack = await startStack(undefined, {
      provider: { plugin: remotePlugin, config: { socketPath, idleExitMs: 1000 } },
      policy: { mode: 'workspace-write', workspaceRoot: workspace },
      sandbox: {},
    })
    const { sessionId } = await stack.open({ cwd: workspace })
    sessionHostPid = await (stack.root.subprocess as remotePlugin.RemoteSubprocessRuntime).sessionHostPid()
    // The session host started bwrap: the confinement runs beside it, not in this process.
    expect(descendants(sessionHostPid!).some((child) => processName(child.pid) === 'bwrap')).toBe(true)
    // The verdicts are built from variables, so the echoed command line cannot contain them.
    const probe = await stack.run(
      sessionId,
      `s=hidden; test -e '${socketPath}' && s=visible; e=writable; echo x > /etc/dsh-remote-probe 2>/dev/null || e=read-only; echo "socket-$s etc-$e"`,
    )
    expect(probe.viewport).toContain('socket-hidden etc-read-only')
  })
})
