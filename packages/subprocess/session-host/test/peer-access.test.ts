import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Context } from '@deepseek-ai/cordis'
import type { SandboxPolicy } from 'dsh-sandbox'
import * as sandboxPlugin from 'dsh-sandbox-local'
import { probeBwrap } from 'dsh-sandbox-local/internal'
import { installed } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type HostProcess, startHostProcess } from './support/host-process'
import { socketClient } from './support/wire-client'

const run = promisify(execFile)

/** A node one-liner that tries to connect to `path` and prints `connected` or the error code. */
function connectProbe(path: string): string[] {
  const script = `const s=require('net').connect(${JSON.stringify(path)});s.on('connect',()=>{console.log('connected');process.exit(0)});s.on('error',e=>{console.log(e.code);process.exit(0)})`
  return [process.execPath, '-e', script]
}

/** Why real-bwrap tests cannot run here, or undefined; on CI a missing sandbox is a failure. */
const bwrapUnavailable = await probeBwrap('bwrap').then(
  () => undefined,
  (error: unknown) => String(error),
)
if (bwrapUnavailable !== undefined && process.env.CI) throw new Error(`bubblewrap must work on CI: ${bwrapUnavailable}`)

const asRoot = process.getuid?.() === 0

let host: HostProcess
beforeAll(async () => {
  host = await startHostProcess()
})
afterAll(() => host?.stop())

describe('who can reach the session host socket', () => {
  it('the socket is 0600 in a 0700 directory of this uid; this uid connects', async () => {
    const { statSync } = await import('node:fs')
    expect(statSync(host.socketPath).mode & 0o777).toBe(0o600)
    expect(statSync(join(host.socketPath, '..')).mode & 0o777).toBe(0o700)
    const client = await socketClient(host.socketPath)
    expect((await client.hello).pid).toBe(host.pid)
    client.close()
  })

  it.skipIf(!asRoot || !installed('setpriv'))('another uid (65534) cannot connect to it', async () => {
    const { stdout } = await run('setpriv', ['--reuid', '65534', '--regid', '65534', '--clear-groups', ...connectProbe(host.socketPath)])
    expect(stdout.trim()).toBe('EACCES')
  })

  describe.skipIf(bwrapUnavailable !== undefined)('a sandboxed session (real bubblewrap)', () => {
    const root = new Context()
    let workspace: string
    beforeAll(async () => {
      await root.plugin(sandboxPlugin, {})
      workspace = await mkdtemp(join(tmpdir(), 'dsh-session-host-ws-'))
    })
    afterAll(() => rm(workspace, { recursive: true, force: true }))

    for (const [label, policy] of [
      ['workspace-write in a scratch workspace', () => ({ mode: 'workspace-write', workspaceRoot: workspace })],
      ['read-only with / as the workspace (the runtime parent is inside it)', () => ({ mode: 'read-only', workspaceRoot: '/' })],
    ] as const) {
      it(`${label}: the socket is not there`, async () => {
        const argv = await root.sandbox.confine(connectProbe(host.socketPath), policy() as SandboxPolicy)
        const { stdout } = await run(argv[0]!, argv.slice(1))
        expect(stdout.trim()).toBe('ENOENT')
      })
    }
  })
})
