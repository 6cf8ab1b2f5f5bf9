import { spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { eventually } from 'dsh-testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { HumanGateway } from '../src/human/gateway'
import { HumanSocketServer } from '../src/human/socket-server'
import { attachCommand, startTestHost, type TestHost } from './attach-harness'
import { CLI_ARGS, DANGER_CONFIG, REPO_ROOT, TSX } from './helpers'
import { PrivateRuntime } from './private-runtime'
import { type Finished, type Running, start } from './process'

/** The unprivileged uid the isolation tests play (nobody on Debian). */
const OTHER_UID = 65534
const STARTUP_MS = 30_000

const cleanups: (() => Promise<void> | void)[] = []

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function host(): Promise<TestHost> {
  const started = await startTestHost()
  cleanups.push(() => started.close())
  return started
}

async function privateRuntime(): Promise<PrivateRuntime> {
  const runtime = await PrivateRuntime.start()
  cleanups.push(() => runtime.close())
  return runtime
}

/** `dsh-terminal attach …` inside `runtime`, where it finds that namespace's hosts. */
function run(args: readonly string[], runtime: PrivateRuntime): Promise<Finished> {
  const [command, ...rest] = attachCommand(args, runtime)
  const running = start(command!, rest)
  running.child.stdin.end()
  return running.finished
}

/** A host (`headless`, `mcp`) from sources inside `runtime`, run in the repository. */
function startHostIn(runtime: PrivateRuntime, args: readonly string[]): Running {
  const [program, ...rest] = runtime.wrap([TSX, ...CLI_ARGS, ...args], REPO_ROOT)
  return start(program!, rest)
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
    const runtime = await privateRuntime()
    const dir = runtime.dir
    mkdirSync(dir, { mode: 0o700 })
    await foreignSocket(join(dir, '1.sock'))
    writeFileSync(join(dir, '1.token'), 'planted\n', { mode: 0o600 })
    chownSync(join(dir, '1.token'), OTHER_UID, OTHER_UID)
    chownSync(dir, OTHER_UID, OTHER_UID)
    const listed = await run([], runtime)
    expect(listed.code).toBe(1)
    expect(listed.stderr).toMatch(new RegExp(`belongs to uid ${OTHER_UID}, not to you .*\\(UNSAFE_RUNTIME_DIR\\)`))
    expect(listed.stdout).toBe('')
  })

  it('refuses a /tmp/dsh-terminal owned by another uid: attach lists nothing, a host serves without attach', async () => {
    const runtime = await privateRuntime()
    chownSync(runtime.parent, OTHER_UID, OTHER_UID)
    const listed = await run([], runtime)
    expect(listed.code).toBe(1)
    expect(listed.stderr).toMatch(new RegExp(`/tmp/dsh-terminal belongs to uid ${OTHER_UID}, not to root or you .*\\(UNSAFE_RUNTIME_DIR\\)`))
    const headless = startHostIn(runtime, ['headless', '--config', DANGER_CONFIG])
    headless.child.stdin.end('{"id":1,"tool":"terminal_list"}\n')
    const finished = await headless.finished
    expect(finished.code).toBe(0)
    expect(finished.stderr).toMatch(/`dsh-terminal attach` is unavailable: .*not to root or you.*UNSAFE_RUNTIME_DIR/)
    expect(JSON.parse(finished.stdout.split('\n')[0]!)).toMatchObject({ id: 1, isError: false })
    expect(readdirSync(runtime.parent)).toEqual([])
  })

  it('skips a socket of another uid in its directory and still lists the real host', async () => {
    const real = await host()
    // pid 1 is alive, so the planted files are not swept as a dead host's.
    await foreignSocket(join(real.dir, '1.sock'))
    writeFileSync(join(real.dir, '1.token'), 'planted\n', { mode: 0o600 })
    chownSync(join(real.dir, '1.token'), OTHER_UID, OTHER_UID)
    expect((await real.call('terminal_open', { type: 'shell' })).code).toBeUndefined()
    const listed = await run([], real.runtime)
    expect(listed.code).toBe(0)
    expect(listed.stderr).toMatch(new RegExp(`skipped .*/1\\.sock: .*1\\.sock belongs to uid ${OTHER_UID}, not to you .*\\(FOREIGN_SOCKET\\)`))
    expect(listed.stdout).toMatch(new RegExp(`^${process.pid}\\s+pty-1\\s`, 'm'))
    const attached = await run(['1:pty-1'], real.runtime)
    expect(attached).toMatchObject({ code: 1, stderr: expect.stringContaining('(NO_SESSION)') })
  })

  it('keeps a process of uid 65534 from connecting to a host or reading its token', async () => {
    // /tmp/dsh-terminal is 1777: only the host's own 0700 directory and 0600 files stand in the way.
    const real = await host()
    const inside = (path: string) => join(real.runtime.insideDir, path.slice(real.dir.length + 1))
    const probe = `
      const net = require('node:net'), fs = require('node:fs')
      let token
      try { fs.readFileSync(${JSON.stringify(inside(real.server.files.tokenPath))}); token = 'read' } catch (e) { token = e.code }
      const socket = net.connect(${JSON.stringify(inside(real.server.files.socketPath))})
      socket.on('connect', () => { console.log(JSON.stringify({ token, connect: 'connected' })); socket.destroy() })
      socket.on('error', (e) => console.log(JSON.stringify({ token, connect: e.code })))`
    const [command, ...args] = real.runtime.wrap(['setpriv', `--reuid=${OTHER_UID}`, `--regid=${OTHER_UID}`, '--clear-groups', process.execPath, '-e', probe])
    const result = spawnSync(command!, args, { encoding: 'utf8' })
    expect(result.stderr).toBe('')
    expect(JSON.parse(result.stdout)).toEqual({ token: 'EACCES', connect: 'EACCES' })
  })
})

describe('a host process and its files', () => {
  it('mcp and headless hosts remove their socket and token when they stop; a crashed host files are swept by the next one', async () => {
    const runtime = await privateRuntime()
    const dir = runtime.dir
    const startHost = (command = 'headless'): Running => {
      const running = startHostIn(runtime, [command, '--config', DANGER_CONFIG])
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
    const listed = await run([], runtime)
    expect(listed.stdout).toBe(`No terminal sessions yet.\n  host ${mcpPid}: 0 session(s), cwd ${REPO_ROOT}, config ${DANGER_CONFIG}\n`)
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
