import { mkdtemp, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { probeBwrap } from 'dsh-sandbox-local/internal'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { eventually, type FarHost, installed, startFarHost } from 'dsh-testkit'
import type { LocalSubprocessRuntime } from 'dsh-subprocess-local/internal'
import { PATIENT, startStack, type Stack } from './support/stack'

/*
 * A session under the allowlist network, cold and warm: the shell gets the proxy variables the
 * sandbox asks for (a warm launcher replaces its environment, so they must come with the session's
 * own), an allowed name answers, a refused one prints the line that says how to allow it.
 */

const bwrapUnavailable = await probeBwrap('bwrap').then(
  () => undefined,
  (error: unknown) => (error instanceof Error ? error.message : String(error)),
)
if (bwrapUnavailable !== undefined && process.env.CI) throw new Error(`bubblewrap must work on CI: ${bwrapUnavailable}`)
const canRun = bwrapUnavailable === undefined && process.getuid?.() === 0 && installed('ip') && installed('curl')

let far: FarHost | undefined
let workspace = ''
let stack: Stack | undefined

beforeAll(async () => {
  if (!canRun) return
  far = await startFarHost()
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'dsh-bash-egress-')))
}, 30_000)

afterEach(async () => {
  await stack?.dispose()
  stack = undefined
})

afterAll(async () => {
  await far?.stop()
  if (workspace !== '') await rm(workspace, { recursive: true, force: true })
})

describe.skipIf(!canRun)('a shell under the allowlist network (real bwrap, a far host in a network namespace)', () => {
  for (const warmSandbox of [false, true]) {
    it(`${warmSandbox ? 'warm' : 'cold'} start: the proxy variables are set, an allowed name answers, a refused one says how to allow it`, async () => {
      stack = await startStack(
        { ...PATIENT, warmSandbox },
        {
          policy: { mode: 'workspace-write', workspaceRoot: workspace, network: 'allowlist', allowedHosts: ['allowed.test'] },
          sandbox: { egressAddresses: { 'allowed.test': far!.address, 'refused.test': far!.address } },
        },
      )
      const runtime = stack.root.subprocess as LocalSubprocessRuntime
      // Warm: open and close sessions until a sandbox waits ahead (each open refills), then take it.
      const waiting = warmSandbox
        ? await eventually(
            async () => {
              if (runtime.warmWrappedPids().length > 0) return runtime.warmWrappedPids()
              await stack!.terminals.close(stack!.agent, (await stack!.open()).sessionId)
              return false
            },
            'a warm sandbox',
            20_000,
          )
        : []
      const { sessionId, pid } = await stack.open()
      expect(waiting.includes(pid as number)).toBe(warmSandbox)
      const variables = await stack.run(sessionId, 'echo "$HTTPS_PROXY $ALL_PROXY $NO_PROXY"')
      expect(variables.viewport).toContain('\nhttp://127.0.0.1:3128 socks5h://127.0.0.1:3128 localhost,127.0.0.1,::1\n')
      const allowed = await stack.run(sessionId, 'curl -sS http://allowed.test:8080/session; echo')
      expect(allowed.exitCode).toBe(0)
      expect(allowed.viewport).toContain('\nfar host: GET /session for allowed.test:8080\n')
      const refused = await stack.run(sessionId, 'curl -sS https://refused.test:8080/')
      expect(refused.exitCode).toBe(56)
      expect(refused.viewport).toContain('CONNECT tunnel failed, response 403')
      const told = await stack.run(sessionId, 'curl -sS http://refused.test:8080/')
      expect(told.viewport).toContain("refused.test:8080 is not on this sandbox's egress allowlist")
      expect(told.viewport).toContain('allowedHosts')
    })
  }
})
