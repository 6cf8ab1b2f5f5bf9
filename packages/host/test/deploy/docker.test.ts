import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { eventually } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FAMILY_BUILTINS } from '../../src/compose/builtins'
import { type Composition, loadComposition } from '../../src/compose/load-config'
import { callTool, connectHttp, connectInMemory, type HttpClient } from '../mcp-clients'
import { docker, missingDockerPrograms } from './docker'
import { DOCKER_IMAGE, DOCKER_RUN_OPTIONS, type DockerStack, startDockerStack } from './docker-stack'

// Real Docker: a private dockerd, deploy/build-image.sh docker, the README's `docker run` options,
// an MCP client over HTTP and a `docker exec -i` target.
const missing = missingDockerPrograms()
const SETUP_MS = 600_000

if (missing.length > 0 && process.env.CI === 'true') {
  describe('docker', () => {
    it('has dockerd, docker, podman, runc, debootstrap and ip', () => {
      throw new Error(`missing ${missing.join(', ')}: install them (apt-get install docker.io podman runc debootstrap iproute2) — .ci/run does`)
    })
  })
}

/** Chains and rules Docker would add to iptables (none: the daemon runs with --iptables=false). */
function dockerIptables(): string[] {
  const saved = spawnSync('iptables-save', [], { encoding: 'utf8' })
  if (saved.status !== 0) return []
  return saved.stdout.split('\n').filter((line) => /DOCKER/.test(line))
}

/** Processes on this machine whose command line names `text` (the daemon's folder: dockerd, containerd, shims, docker-proxy). */
function processesNaming(text: string): string[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')
      } catch {
        return ''
      }
    })
    .filter((args) => args.includes(text))
}

/** Processes in a container, one `pid args` line each, without the `ps` that lists them. */
async function processesIn(stack: DockerStack, container: string): Promise<string[]> {
  const { stdout } = await docker(stack.daemon, ['exec', container, 'ps', '-eo', 'pid=,args='])
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

/** A composition whose sessions all run where `connect` reaches `dsh-session-host --stdio`. */
async function remoteComposition(dir: string, connect: readonly string[]): Promise<Composition> {
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
  return loadComposition({
    configPath: join(dir, 'cordis.yml'),
    builtins: { ...FAMILY_BUILTINS, 'dsh-subprocess-remote': () => import('dsh-subprocess-remote') },
  })
}

describe.skipIf(missing.length > 0)('docker: the image built and run as the README says', () => {
  let stack: DockerStack
  const iptablesBefore = dockerIptables()

  beforeAll(async () => {
    stack = await startDockerStack()
  }, SETUP_MS)
  afterAll(async () => {
    const bridge = stack?.daemon.bridge
    await stack?.remove()
    // Nothing of the daemon is left: no process of it or its docker-proxy, no folder, no bridge, no iptables chain.
    if (bridge) expect(spawnSync('ip', ['link', 'show', bridge]).status).not.toBe(0)
    expect(dockerIptables()).toEqual(iptablesBefore)
    if (stack) {
      const folder = dirname(stack.daemon.host.slice('unix://'.length))
      expect(existsSync(folder)).toBe(false)
      expect(processesNaming(folder)).toEqual([])
      expect(processesNaming(`-host-port ${new URL(stack.origin).port} `)).toEqual([])
    }
  }, SETUP_MS)

  describe('the HTTP host (`docker run … -p 127.0.0.1:PORT:8080 -v $PWD:/workspace`)', () => {
    let http: HttpClient | undefined
    afterAll(async () => {
      await http?.transport.terminateSession().catch(() => {})
      await http?.client.close()
    })

    // Each probe is bounded: docker-proxy accepts at once and may hold a connection while the container's side is not up yet.
    const probe = (route: string) => fetch(`${stack.origin}${route}`, { signal: AbortSignal.timeout(3_000) }).catch(() => undefined)

    it('answers /healthz and /readyz', { timeout: 130_000 }, async () => {
      await eventually(async () => (await probe('/healthz'))?.status === 200, 'the host to answer /healthz', 60_000)
      const ready = await eventually(
        async () => {
          const response = await probe('/readyz')
          return response?.status === 200 && response
        },
        'the host to be ready (a sandboxed shell opens)',
        60_000,
      )
      expect(ready.status).toBe(200)
      // Published by docker-proxy (no iptables here); afterAll checks it is gone.
      expect(processesNaming(`-host-port ${new URL(stack.origin).port} `)).toHaveLength(1)
    })

    it('refuses a wrong token', async () => {
      await expect(connectHttp(`${stack.origin}/mcp`, 'not-the-token-at-all')).rejects.toThrow()
    })

    it('an MCP client with the token runs a confined shell in /workspace', async () => {
      http = await connectHttp(`${stack.origin}/mcp`, stack.token)
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

      // The bind mount carried the workspace write to this machine; the container has nothing outside it.
      expect(readFileSync(join(stack.workspace, 'kept.txt'), 'utf8')).toBe('kept\n')
      const check = await docker(stack.daemon, ['exec', stack.httpContainer, 'sh', '-c', 'test -e /etc/dsh-outside && echo leaked; hostname'])
      expect(check.stdout).not.toContain('leaked')
      expect(check.stdout).not.toContain('dsh\n')
      expect((await callTool(http.client, 'terminal_close', { sessionId })).isError).toBe(false)
    })
  })

  describe('a session through `docker exec -i <target> dsh-session-host --stdio`', () => {
    let composition: Composition | undefined
    let client: Client
    let sessionId: string
    let dir: string

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'dsh-docker-target-'))
      const connect = [
        'env',
        `DOCKER_HOST=${stack.daemon.host}`,
        'docker',
        'exec',
        '-i',
        stack.targetContainer,
        'dsh-session-host',
        '--stdio',
        '--idle-exit-ms',
        '500',
      ]
      composition = await remoteComposition(dir, connect)
      ;({ client } = await connectInMemory(composition))
      // cwd '/': the shell backend checks a cwd on this machine, not the target's.
      const opened = await callTool(client, 'terminal_open', { type: 'shell', cwd: '/' })
      if (opened.isError) throw new Error(`terminal_open: ${opened.text}`)
      sessionId = opened.meta.sessionId as string
    }, SETUP_MS)
    afterAll(async () => {
      await client?.close()
      await composition?.dispose()
      if (dir) rmSync(dir, { recursive: true, force: true })
    })

    it('`true` settles stdin_read with exit 0 at the prompt, inside the container', async () => {
      expect((await send(client, sessionId, 'cd /workspace && pwd')).text).toContain('/workspace\n')
      const result = await send(client, sessionId, 'true')
      expect(result.meta).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
      expect(result.text).toContain('[input: prompt')
      const where = await send(client, sessionId, 'cat /proc/1/cmdline | tr "\\0" " "; echo')
      expect(where.text).toContain('dsh-entrypoint target')
    })

    it('close leaves no process of the session in the container, and the session host idles out', async () => {
      await send(client, sessionId, 'bash -c \'trap "" TERM; exec sleep 1001\' & echo started')
      expect((await processesIn(stack, stack.targetContainer)).some((line) => / sleep 1001$/.test(line))).toBe(true)
      expect((await callTool(client, 'terminal_close', { sessionId })).isError).toBe(false)
      const left = await processesIn(stack, stack.targetContainer)
      expect(left.filter((line) => /sleep 1001|bash --noprofile/.test(line))).toEqual([])
      await client.close()
      await composition!.dispose()
      composition = undefined
      await eventually(
        async () =>
          !(await processesIn(stack, stack.targetContainer)).some((line) => line.includes('dsh-session-host') || line.includes('session-host/dist/bin.js')),
        'the relay and then the idle session host in the container to exit',
      )
    })
  })

  describe('a throwaway container per connection (`docker run -i --rm <image> session-host`)', () => {
    it('runs a session inside and is gone when the client hangs up', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'dsh-docker-once-'))
      const name = `dsh-once-${stack.targetContainer.slice('work-1-'.length)}`
      const connect = [
        'env',
        `DOCKER_HOST=${stack.daemon.host}`,
        'docker',
        'run',
        '-i',
        '--rm',
        '--name',
        name,
        ...DOCKER_RUN_OPTIONS,
        DOCKER_IMAGE,
        'session-host',
      ]
      let composition: Composition | undefined
      try {
        composition = await remoteComposition(dir, connect)
        const { client } = await connectInMemory(composition)
        const opened = await callTool(client, 'terminal_open', { type: 'shell', cwd: '/' })
        if (opened.isError) throw new Error(`terminal_open: ${opened.text}`)
        const sessionId = opened.meta.sessionId as string
        const result = await send(client, sessionId, 'cat /proc/1/cmdline | tr "\\0" " "; echo')
        expect(result.meta).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
        expect(result.text).toContain('session-host/dist/bin.js --stdio')
        const listed = await docker(stack.daemon, ['ps', '--format', '{{.Names}}'])
        expect(listed.stdout.split('\n')).toContain(name)
        expect((await callTool(client, 'terminal_close', { sessionId })).isError).toBe(false)
        await client.close()
        await composition.dispose()
        composition = undefined
        await eventually(
          async () => !(await docker(stack.daemon, ['ps', '-a', '--format', '{{.Names}}'])).stdout.split('\n').includes(name),
          'the throwaway container to be removed once its client hung up',
          30_000,
        )
      } finally {
        await composition?.dispose()
        rmSync(dir, { recursive: true, force: true })
      }
    })
  })
})
