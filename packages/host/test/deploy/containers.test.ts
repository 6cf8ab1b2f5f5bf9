import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { eventually } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FAMILY_BUILTINS } from '../../src/compose/builtins'
import { type Composition, loadComposition } from '../../src/compose/load-config'
import { callTool, connectHttp, connectInMemory, type HttpClient } from '../mcp-clients'
import { HTTP_CONTAINER, type KubeStack, startKubeStack, TARGET_CONTAINER } from './kube-stack'
import { missingPrograms, podman } from './podman'

// Real Podman, real containers: deploy/Containerfile built on a local bookworm base, the
// deploy/kubernetes manifests under `podman kube play`, and a `podman exec -i` target.
const missing = missingPrograms()
const SETUP_MS = 600_000

if (missing.length > 0 && process.env.CI === 'true') {
  describe('containers', () => {
    it('has podman, runc and debootstrap', () => {
      throw new Error(`missing ${missing.join(', ')}: install them (apt-get install podman runc debootstrap) — .ci/run does`)
    })
  })
}

/** Processes in a container, one `pid args` line each, without the `ps` that lists them. */
async function processesIn(stack: KubeStack, container: string): Promise<string[]> {
  const { stdout } = await podman(stack.podman, ['exec', container, 'ps', '-eo', 'pid=,args='])
  return stdout
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !/\bps -eo\b/.test(line))
}

async function send(client: Client, sessionId: string, text: string) {
  const result = await callTool(client, 'terminal_send', { sessionId, text })
  if (result.isError) throw new Error(`terminal_send ${JSON.stringify(text)} failed: ${result.text}`)
  return result
}

describe.skipIf(missing.length > 0)('containers: the image and the Kubernetes manifests under podman', () => {
  let stack: KubeStack

  beforeAll(async () => {
    stack = await startKubeStack()
  }, SETUP_MS)
  afterAll(async () => {
    await stack?.remove()
    if (stack) {
      const { stdout } = await podman(stack.podman, ['ps', '-a', '--format', '{{.Names}}'], { allowFailure: true })
      expect(stdout.split('\n').filter((name) => name === HTTP_CONTAINER || name === TARGET_CONTAINER)).toEqual([])
    }
  }, SETUP_MS)

  describe('the HTTP host Deployment', () => {
    let http: HttpClient | undefined
    afterAll(async () => {
      await http?.transport.terminateSession().catch(() => {})
      await http?.client.close()
    })

    it('answers /healthz and /readyz on 127.0.0.1 without the token', async () => {
      await eventually(async () => (await fetch(`${stack.origin}/healthz`).catch(() => undefined))?.status === 200, 'the host to answer /healthz', 60_000)
      const ready = await eventually(
        async () => {
          const response = await fetch(`${stack.origin}/readyz`).catch(() => undefined)
          return response?.status === 200 && response
        },
        'the host to be ready (a sandboxed shell opens)',
        60_000,
      )
      expect(ready.status).toBe(200)
    })

    it('refuses a wrong token', async () => {
      const response = await fetch(`${stack.origin}/mcp`, {
        method: 'POST',
        headers: { Authorization: 'Bearer not-the-token-at-all', 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
      })
      expect(response.status).toBe(401)
      await expect(connectHttp(`${stack.origin}/mcp`, 'not-the-token-at-all')).rejects.toThrow()
    })

    it('an MCP client with the Secret token lists tools and runs a confined shell in /workspace', async () => {
      http = await connectHttp(`${stack.origin}/mcp`, stack.token)
      const { tools } = await http.client.listTools()
      expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['terminal_open', 'terminal_send', 'terminal_close']))
      const opened = await callTool(http.client, 'terminal_open', { type: 'shell' })
      expect(opened.isError).toBe(false)
      const sessionId = opened.meta.sessionId as string
      const echoed = await send(http.client, sessionId, 'echo "inside-$((6 * 7))" "$PWD"')
      expect(echoed.text).toContain('inside-42 /workspace')
      expect(echoed.meta).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })

      const written = await send(http.client, sessionId, 'echo kept > /workspace/kept.txt; echo "ws=$?"')
      expect(written.text).toContain('ws=0')
      const outside = await send(http.client, sessionId, 'echo x > /etc/dsh-outside 2>/dev/null; echo "etc=$?"')
      expect(outside.text).toContain('etc=1')
      const sys = await send(http.client, sessionId, 'echo dsh > /proc/sys/kernel/hostname 2>/dev/null; echo "sys=$?"')
      expect(sys.text).toContain('sys=1')

      // The container itself agrees: the workspace file is there, nothing was written outside it.
      const check = await podman(stack.podman, [
        'exec',
        HTTP_CONTAINER,
        'sh',
        '-c',
        'cat /workspace/kept.txt; test -e /etc/dsh-outside && echo leaked; hostname',
      ])
      expect(check.stdout.split('\n')[0]).toBe('kept')
      expect(check.stdout).not.toContain('leaked')
      expect(check.stdout).not.toContain('dsh\n')
      expect((await callTool(http.client, 'terminal_close', { sessionId })).isError).toBe(false)
    })
  })

  describe('a session through `podman exec -i <ctr> dsh-session-host --stdio`', () => {
    let composition: Composition | undefined
    let client: Client
    let sessionId: string
    let dir: string

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'dsh-exec-target-'))
      // `--stdio` relays to the container's socket session host (started on first use); it idles out soon after the last terminal.
      const connect = [
        'env',
        `CONTAINERS_CONF=${stack.containersConf}`,
        'podman',
        'exec',
        '-i',
        TARGET_CONTAINER,
        'dsh-session-host',
        '--stdio',
        '--idle-exit-ms',
        '500',
      ]
      writeFileSync(
        join(dir, 'cordis.yml'),
        [
          '- { id: agents, name: dsh-agent }',
          '- { id: tools, name: dsh-tools }',
          '- { id: jobs, name: dsh-jobs }',
          '- { id: job-tools, name: dsh-tool-jobs }',
          `- { id: subprocess, name: dsh-subprocess-remote, config: { connect: ${JSON.stringify(connect)} } }`,
          '- { id: sandbox-policy, name: dsh-sandbox-policy, config: { mode: danger-full-access, workspaceRoot: . } }',
          '- { id: terminals, name: dsh-terminal }',
          '- { id: bash, name: dsh-terminal-bash }',
          '- { id: terminal-tools, name: dsh-tool-terminal }',
          '',
        ].join('\n'),
      )
      composition = await loadComposition({
        configPath: join(dir, 'cordis.yml'),
        builtins: { ...FAMILY_BUILTINS, 'dsh-subprocess-remote': () => import('dsh-subprocess-remote') },
      })
      ;({ client } = await connectInMemory(composition))
      // cwd '/': the shell backend checks a cwd on the MCP host's filesystem, not the target's
      // (/workspace exists only in the container); the first send moves there.
      const opened = await callTool(client, 'terminal_open', { type: 'shell', cwd: '/' })
      if (opened.isError) throw new Error(`terminal_open: ${opened.text}`)
      sessionId = opened.meta.sessionId as string
    }, SETUP_MS)
    afterAll(async () => {
      await client?.close()
      await composition?.dispose()
      if (dir) rmSync(dir, { recursive: true, force: true })
    })

    it('`true` settles stdin_read with exit 0 at the shell prompt, inside the container', async () => {
      expect((await send(client, sessionId, 'cd /workspace && pwd')).text).toContain('/workspace\n')
      const result = await send(client, sessionId, 'true')
      expect(result.meta).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
      expect(result.text).toContain('[input: prompt')
      const where = await send(client, sessionId, 'cat /proc/1/cmdline | tr "\\0" " "; echo')
      expect(where.text).toContain('dsh-entrypoint target')
    })

    it('`read -s` is a password prompt', async () => {
      const asked = await send(client, sessionId, 'read -s -p "token: " secret')
      expect(asked.meta).toMatchObject({ waitReason: 'stdin_read' })
      expect(asked.text).toContain('[input: password')
      await send(client, sessionId, 'hunter2')
      expect((await send(client, sessionId, 'echo "len=${#secret}"')).text).toContain('len=7')
    })

    it('SIGINT interrupts `sleep` and the send settles at the prompt with 130', async () => {
      const pending = callTool(client, 'terminal_send', { sessionId, text: 'sleep 61' })
      await eventually(async () => (await processesIn(stack, TARGET_CONTAINER)).some((line) => / sleep 61$/.test(line)), 'sleep 61 to run in the container')
      const signalled = await callTool(client, 'terminal_signal', { sessionId, signal: 'SIGINT' })
      expect(signalled.isError).toBe(false)
      expect((await pending).meta).toMatchObject({ waitReason: 'stdin_read', exitCode: 130 })
    })

    it('close leaves no process of the session in the container, and unloading ends the relay; the session host idles out', async () => {
      await send(client, sessionId, 'bash -c \'trap "" TERM; exec sleep 1001\' & echo started')
      expect((await processesIn(stack, TARGET_CONTAINER)).some((line) => / sleep 1001$/.test(line))).toBe(true)
      expect((await callTool(client, 'terminal_close', { sessionId })).isError).toBe(false)
      const left = await processesIn(stack, TARGET_CONTAINER)
      expect(left.filter((line) => /sleep 1001|bash --noprofile/.test(line))).toEqual([])
      await client.close()
      await composition!.dispose()
      composition = undefined
      await eventually(
        async () =>
          !(await processesIn(stack, TARGET_CONTAINER)).some((line) => line.includes('dsh-session-host') || line.includes('session-host/dist/bin.js')),
        'the relay and then the idle session host in the container to exit',
      )
    })
  })
})
