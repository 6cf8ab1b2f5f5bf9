import { spawnSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eventually } from 'dsh-testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { HumanGateway } from '../src/human/gateway'
import { HumanSocketServer } from '../src/human/socket-server'
import { attachCommand, startTestHost, type TestHost } from './attach-harness'
import { DANGER_CONFIG, DEFAULT_CONFIG, load } from './helpers'
import { type Finished, type Running, start } from './process'

/** The unprivileged uid the isolation tests play (nobody on Debian). */
const OTHER_UID = 65534
const STARTUP_MS = 30_000

const cleanups: (() => Promise<void> | void)[] = []
const savedRuntimeDir = process.env.XDG_RUNTIME_DIR

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  if (savedRuntimeDir === undefined) delete process.env.XDG_RUNTIME_DIR
  else process.env.XDG_RUNTIME_DIR = savedRuntimeDir
})

async function host(): Promise<TestHost> {
  const started = await startTestHost()
  cleanups.push(() => started.close())
  process.env.XDG_RUNTIME_DIR = started.runtimeRoot
  return started
}

function run(args: readonly string[]): Promise<Finished> {
  const [command, ...rest] = attachCommand(args)
  const running = start(command!, rest)
  running.child.stdin.end()
  return running.finished
}

/** A real Unix socket at `path`, listening, owned by {@link OTHER_UID}. */
async function foreignSocket(path: string): Promise<Server> {
  const server = createServer((socket) => socket.end('{"type":"ok","pid":1}\n'))
  await new Promise<void>((resolve) => server.listen(path, resolve))
  chownSync(path, OTHER_UID, OTHER_UID)
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return server
}

describe('attach talks only to sockets of its own uid', () => {
  it('refuses a runtime directory owned by another uid', async () => {
    const root = mkdtempSync(join(tmpdir(), 'dsh-attach-foreign-'))
    cleanups.push(() => rmSync(root, { recursive: true, force: true }))
    const dir = join(root, 'dsh-terminal')
    mkdirSync(dir, { mode: 0o700 })
    await foreignSocket(join(dir, '1.sock'))
    writeFileSync(join(dir, '1.token'), 'planted\n', { mode: 0o600 })
    chownSync(join(dir, '1.token'), OTHER_UID, OTHER_UID)
    chownSync(dir, OTHER_UID, OTHER_UID)
    process.env.XDG_RUNTIME_DIR = root
    const listed = await run([])
    expect(listed.code).toBe(1)
    expect(listed.stderr).toMatch(new RegExp(`belongs to uid ${OTHER_UID}, not to you .*\\(UNSAFE_RUNTIME_DIR\\)`))
    expect(listed.stdout).toBe('')
  })

  it('skips a socket of another uid in its directory and still lists the real host', async () => {
    const real = await host()
    // pid 1 is alive, so the planted files are not swept as a dead host's.
    await foreignSocket(join(real.dir, '1.sock'))
    writeFileSync(join(real.dir, '1.token'), 'planted\n', { mode: 0o600 })
    chownSync(join(real.dir, '1.token'), OTHER_UID, OTHER_UID)
    expect((await real.call('terminal_open', { type: 'shell' })).code).toBeUndefined()
    const listed = await run([])
    expect(listed.code).toBe(0)
    expect(listed.stderr).toMatch(new RegExp(`skipped .*/1\\.sock: .*1\\.sock belongs to uid ${OTHER_UID}, not to you .*\\(FOREIGN_SOCKET\\)`))
    expect(listed.stdout).toMatch(new RegExp(`^${process.pid}\\s+pty-1\\s`, 'm'))
    const attached = await run(['1:pty-1'])
    expect(attached).toMatchObject({ code: 1, stderr: expect.stringContaining('(NO_SESSION)') })
  })

  it('keeps a process of uid 65534 from connecting to a host or reading its token', async () => {
    const real = await host()
    chmodSync(real.runtimeRoot, 0o755) // only the host's own 0700 directory and 0600 files stand in the way
    const probe = `
      const net = require('node:net'), fs = require('node:fs')
      let token
      try { fs.readFileSync(${JSON.stringify(real.server.files.tokenPath)}); token = 'read' } catch (e) { token = e.code }
      const socket = net.connect(${JSON.stringify(real.server.files.socketPath)})
      socket.on('connect', () => { console.log(JSON.stringify({ token, connect: 'connected' })); socket.destroy() })
      socket.on('error', (e) => console.log(JSON.stringify({ token, connect: e.code })))`
    const result = spawnSync('setpriv', [`--reuid=${OTHER_UID}`, `--regid=${OTHER_UID}`, '--clear-groups', process.execPath, '-e', probe], { encoding: 'utf8' })
    expect(result.stderr).toBe('')
    expect(JSON.parse(result.stdout)).toEqual({ token: 'EACCES', connect: 'EACCES' })
  })
})

describe('a host process and its files', () => {
  it('mcp and headless hosts remove their socket and token when they stop; a crashed host files are swept by the next one', async () => {
    const root = mkdtempSync(join(tmpdir(), 'dsh-attach-life-'))
    cleanups.push(() => rmSync(root, { recursive: true, force: true }))
    process.env.XDG_RUNTIME_DIR = root
    const dir = join(root, 'dsh-terminal')
    const startHost = (command = 'headless'): Running => {
      const running = start(attachCommand([])[0]!, [...attachCommand([]).slice(1, -1), command, '--config', DANGER_CONFIG])
      cleanups.push(async () => {
        running.child.kill('SIGKILL')
        await running.finished
      })
      return running
    }
    const hostFiles = () => (existsSync(dir) ? readdirSync(dir).sort() : [])
    const pidOf = async () =>
      Number(
        await eventually(
          () =>
            hostFiles()
              .find((name) => name.endsWith('.sock'))
              ?.replace('.sock', ''),
          'the host to create its socket',
          STARTUP_MS,
        ),
      )

    const mcp = startHost('mcp')
    const mcpPid = await pidOf()
    const listed = await run([])
    expect(listed.stdout).toBe(`No terminal sessions yet.\n  host ${mcpPid}: 0 session(s), cwd ${process.cwd()}, config ${DANGER_CONFIG}\n`)
    mcp.child.stdin.end()
    expect((await mcp.finished).code).toBe(0)
    expect(hostFiles()).toEqual([])

    const clean = startHost()
    const pid = await pidOf()
    expect(hostFiles()).toEqual([`${pid}.sock`, `${pid}.token`])
    clean.child.stdin.end() // EOF: the headless host closes everything and exits
    expect((await clean.finished).code).toBe(0)
    expect(hostFiles()).toEqual([])

    const crashing = startHost()
    const crashedPid = await pidOf()
    process.kill(crashedPid, 'SIGKILL')
    await crashing.finished
    expect(hostFiles()).toEqual([`${crashedPid}.sock`, `${crashedPid}.token`])
    const next = await HumanSocketServer.start({ gateway: new HumanGateway(undefined as never), dir })
    cleanups.push(() => next.close())
    expect(hostFiles()).toEqual([`${process.pid}.sock`, `${process.pid}.token`])
  })
})

describe("a sandboxed session cannot reach its host's attach socket", () => {
  it('with XDG_RUNTIME_DIR set, the default composition shows the session an empty runtime directory', async () => {
    // Outside /tmp, which every sandbox has private anyway: the runtime directory itself must be hidden.
    const runtimeRoot = mkdtempSync('/var/tmp/dsh-attach-sandbox-')
    chmodSync(runtimeRoot, 0o700)
    cleanups.push(() => rmSync(runtimeRoot, { recursive: true, force: true }))
    process.env.XDG_RUNTIME_DIR = runtimeRoot
    const composition = await load(DEFAULT_CONFIG)
    const agent = await composition.agents.create()
    const dir = join(runtimeRoot, 'dsh-terminal')
    const server = await HumanSocketServer.start({ gateway: new HumanGateway(composition.root), configPath: DEFAULT_CONFIG, dir })
    cleanups.push(async () => {
      await server.close()
      await agent.dispose().catch(() => {})
      await composition.dispose()
    })
    expect(readdirSync(dir).sort()).toEqual([`${process.pid}.sock`, `${process.pid}.token`])
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await composition.tools.execute({ callId: `sandbox-${name}`, name, arguments: args, agent })
      return result.content.map((part) => ('text' in part ? part.text : '')).join('')
    }
    const opened = await call('terminal_open', { type: 'shell' })
    const sessionId = /pty-\d+/.exec(opened)?.[0] as string
    const probe = `ls -A "${runtimeRoot}" | wc -l; cat "${dir}/${process.pid}.token" 2>&1 | head -c 80; echo; python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print('CONN' + 'ECTED')" "${dir}/${process.pid}.sock" 2>&1 | tail -1`
    const inside = await call('terminal_send', { sessionId, text: probe })
    expect(inside).toMatch(/\n0\n/)
    expect(inside).not.toContain('CONNECTED')
    expect(inside).toMatch(/No such file or directory/)
  })
})
