/**
 * Attacks on how dsh-subprocess-remote finds, starts and trusts the local session host, with real
 * processes (as root, another uid is 65534). Each test asserts the SAFE behaviour; `it.fails` marks
 * a hole still open (see its `// HOLE:` comment).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { hostRuntimeDir } from 'dsh-sandbox'
import { sessionHostCommand } from 'dsh-session-host'
import { isSubprocessError } from 'dsh-subprocess'
import { eventually, installed, isAlive } from 'dsh-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { bashSpec, collect, freshSocketPath, mountRemote, removeSocketDir } from './support/remote'

const run = promisify(execFile)
const asRoot = process.getuid?.() === 0
const NOBODY = ['--reuid', '65534', '--regid', '65534', '--clear-groups']

/** Session hosts these tests started, killed at the end if still running. */
const hostPids = new Set<number>()
const cleanups: (() => void)[] = []
afterAll(() => {
  for (const pid of hostPids) if (isAlive(pid)) process.kill(pid, 'SIGKILL')
  for (const cleanup of cleanups) cleanup()
})

/** The pid of every live process whose argv contains `needle` (a test's unique socket path). */
function processesWith(needle: string): number[] {
  return processesMatching((cmdline) => cmdline.includes(needle))
}

function processesMatching(match: (cmdline: string) => boolean): number[] {
  const found: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      if (match(readFileSync(`/proc/${name}/cmdline`, 'latin1'))) found.push(Number(name))
    } catch {
      // Gone.
    }
  }
  return found
}

/**
 * A forged "session host" run as uid 65534 on `socketPath`: it records every connection and every
 * byte it receives in `log` (keystrokes a trusting client would send it).
 */
async function forgedHostAs65534(socketPath: string, log: string): Promise<ChildProcess> {
  const script = `const fs=require('fs');const s=require('net').createServer(c=>{fs.appendFileSync(${JSON.stringify(log)},'CONNECTED\\n');c.on('data',d=>fs.appendFileSync(${JSON.stringify(log)},d.toString('latin1')))});s.listen(${JSON.stringify(socketPath)},()=>{fs.chmodSync(${JSON.stringify(socketPath)},0o777);console.log('listening')})`
  const child = spawn('setpriv', [...NOBODY, process.execPath, '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
  cleanups.push(() => child.kill('SIGKILL'))
  let out = ''
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()))
  await eventually(() => out.includes('listening') || child.exitCode !== null, 'the forged host to listen')
  expect(out).toContain('listening')
  return child
}

describe.skipIf(!asRoot || !installed('setpriv'))('files planted by another uid (65534) before root starts', () => {
  const parent = hostRuntimeDir(0).replace(/\/0$/, '')

  it("a directory of 65534's own in the runtime parent, holding a forged socket: root's client refuses it and sends it nothing", async () => {
    const dir = join(parent, `atk-${randomBytes(5).toString('hex')}`)
    const log = `/tmp/forged-${randomBytes(5).toString('hex')}.log`
    await run('setpriv', [...NOBODY, 'sh', '-c', `mkdir -m 0700 ${dir} && touch ${log} && chmod 666 ${log}`])
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    cleanups.push(() => rmSync(log, { force: true }))
    const forged = await forgedHostAs65534(join(dir, 'session-host.sock'), log)
    const remote = await mountRemote({ socketPath: join(dir, 'session-host.sock'), startTimeoutMs: 5000 })
    try {
      const error = await remote.runtime.spawnTerminal(bashSpec()).catch((caught: unknown) => caught)
      expect(isSubprocessError(error, 'SPAWN_FAILED')).toBe(true)
      expect((error as Error).message).toMatch(/belongs to uid 65534|refusing/)
    } finally {
      await remote.dispose()
    }
    expect(readFileSync(log, 'utf8')).toBe('')
    // And no session host was started for it.
    expect(processesWith(dir).filter((pid) => pid !== forged.pid)).toEqual([])
  })

  it("a symlink planted in the runtime parent in place of root's directory: refused, nothing connects through it", async () => {
    const target = join(parent, `atk-${randomBytes(5).toString('hex')}`)
    const link = join(parent, `atk-link-${randomBytes(5).toString('hex')}`)
    const log = `/tmp/forged-${randomBytes(5).toString('hex')}.log`
    await run('setpriv', [...NOBODY, 'sh', '-c', `mkdir -m 0700 ${target} && ln -s ${target} ${link} && touch ${log} && chmod 666 ${log}`])
    cleanups.push(() => rmSync(target, { recursive: true, force: true }))
    cleanups.push(() => rmSync(link, { force: true }))
    cleanups.push(() => rmSync(log, { force: true }))
    const forged = await forgedHostAs65534(join(target, 'session-host.sock'), log)
    const remote = await mountRemote({ socketPath: join(link, 'session-host.sock'), startTimeoutMs: 5000 })
    try {
      const error = await remote.runtime.spawnTerminal(bashSpec()).catch((caught: unknown) => caught)
      expect(isSubprocessError(error, 'SPAWN_FAILED')).toBe(true)
    } finally {
      await remote.dispose()
    }
    expect(readFileSync(log, 'utf8')).toBe('')
    expect(processesWith(link).filter((pid) => pid !== forged.pid)).toEqual([])
  })

  it("a world-writable directory 65534 pre-created under root's name: refused, no host is started in it", async () => {
    const dir = join(parent, `atk-${randomBytes(5).toString('hex')}`)
    await run('setpriv', [...NOBODY, 'sh', '-c', `mkdir ${dir} && chmod 0777 ${dir}`])
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    const remote = await mountRemote({ socketPath: join(dir, 'session-host.sock'), startTimeoutMs: 5000 })
    try {
      const error = await remote.runtime.spawnTerminal(bashSpec()).catch((caught: unknown) => caught)
      expect(isSubprocessError(error, 'SPAWN_FAILED')).toBe(true)
    } finally {
      await remote.dispose()
    }
    expect(existsSync(join(dir, 'session-host.log'))).toBe(false)
    expect(existsSync(join(dir, 'session-host.lock'))).toBe(false)
    expect(processesWith(dir)).toEqual([])
  })

  it("root's own directory with open modes (0755) is refused by the client and by the host bin alike (UNSAFE_RUNTIME_DIR)", async () => {
    const socketPath = freshSocketPath()
    mkdirSync(join(socketPath, '..'), { mode: 0o700 })
    chmodSync(join(socketPath, '..'), 0o755)
    cleanups.push(() => removeSocketDir(socketPath))
    const remote = await mountRemote({ socketPath, startTimeoutMs: 5000 })
    try {
      const error = await remote.runtime.spawnTerminal(bashSpec()).catch((caught: unknown) => caught)
      expect(isSubprocessError(error, 'SPAWN_FAILED')).toBe(true)
      expect((error as Error).message).toMatch(/mode 755/)
    } finally {
      await remote.dispose()
    }
    const [file = '', ...args] = sessionHostCommand()
    const result = await run(file, [...args, '--socket', socketPath, '--idle-exit-ms', '1000']).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => error,
    )
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/mode 755/)
    expect(existsSync(socketPath)).toBe(false)
  }, 30_000)
})

describe('starting the session host', () => {
  it('a stale socket left by a SIGKILLed host: the next spawn starts a fresh host in its place', async () => {
    const socketPath = freshSocketPath()
    cleanups.push(() => removeSocketDir(socketPath))
    const first = await mountRemote({ socketPath, idleExitMs: 2000 })
    const shell = await first.runtime.spawnTerminal(bashSpec())
    const deadPid = (await first.runtime.sessionHostPid())!
    hostPids.add(deadPid)
    process.kill(deadPid, 'SIGKILL')
    await shell.done
    await first.dispose()
    await eventually(() => !isAlive(deadPid), 'the host to die')
    expect(existsSync(socketPath)).toBe(true)
    const second = await mountRemote({ socketPath, idleExitMs: 2000 })
    try {
      const fresh = await second.runtime.spawnTerminal(bashSpec())
      const freshPid = (await second.runtime.sessionHostPid())!
      hostPids.add(freshPid)
      expect(freshPid).not.toBe(deadPid)
      const text = collect(fresh)
      await fresh.write('echo fresh-$((4*4))\r')
      await eventually(() => text().includes('fresh-16'), 'the fresh terminal')
      await fresh.terminate()
    } finally {
      await second.dispose()
    }
  }, 60_000)

  it('four providers racing past a stale lock (its owner dead) still start exactly one session host', async () => {
    const socketPath = freshSocketPath()
    cleanups.push(() => removeSocketDir(socketPath))
    mkdirSync(join(socketPath, '..'), { mode: 0o700 })
    // A lock whose owner is dead: a pid that exited.
    const dead = spawn('true')
    await new Promise((resolve) => dead.once('exit', resolve))
    writeFileSync(join(socketPath, '..', 'session-host.lock'), `${dead.pid}\n`, { mode: 0o600 })
    const remotes = await Promise.all(Array.from({ length: 4 }, () => mountRemote({ socketPath, idleExitMs: 2000 })))
    try {
      const shells = await Promise.all(remotes.map((remote) => remote.runtime.spawnTerminal(bashSpec())))
      const pids = await Promise.all(remotes.map((remote) => remote.runtime.sessionHostPid()))
      for (const pid of pids) hostPids.add(pid!)
      expect(new Set(pids).size).toBe(1)
      // No second host was started and left running (one that lost the socket race exits at once).
      await eventually(() => processesWith(socketPath).filter((pid) => pid !== pids[0]).length === 0 && 'only one', 'every losing host to exit', 20_000)
      await Promise.all(shells.map((shell) => shell.terminate()))
    } finally {
      await Promise.all(remotes.map((remote) => remote.dispose()))
    }
  }, 60_000)
})

describe('the environment', () => {
  it("credentials of the first client reach neither the session host's own environment nor any session, of this client or a later one", async () => {
    const secret = `ghp_${randomBytes(12).toString('hex')}abcdefghijkl`
    const socketPath = freshSocketPath()
    cleanups.push(() => removeSocketDir(socketPath))
    const saved = { ...process.env }
    process.env.GITHUB_TOKEN = secret
    process.env.AWS_SECRET_ACCESS_KEY = secret
    process.env.DSH_HARNESS_THING = secret
    process.env.FIRST_CLIENT_PLAIN = 'first-client-plain'
    let first: Awaited<ReturnType<typeof mountRemote>> | undefined
    let second: Awaited<ReturnType<typeof mountRemote>> | undefined
    try {
      first = await mountRemote({ socketPath, idleExitMs: 5000 })
      const a = await first.runtime.spawnTerminal(bashSpec({ argv: ['bash', '--noprofile', '--norc', '-c', 'env; echo env-done; sleep 30'] }))
      const textA = collect(a)
      const hostPid = (await first.runtime.sessionHostPid())!
      hostPids.add(hostPid)
      expect(readFileSync(`/proc/${hostPid}/environ`, 'latin1')).not.toContain(secret)
      await eventually(() => textA().includes('env-done'), 'the first env listing')
      expect(textA()).not.toContain(secret)
      // The same host, a later client with another environment: nothing of the first one's.
      for (const name of ['GITHUB_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'DSH_HARNESS_THING', 'FIRST_CLIENT_PLAIN']) delete process.env[name]
      second = await mountRemote({ socketPath, idleExitMs: 5000 })
      const b = await second.runtime.spawnTerminal(bashSpec({ argv: ['bash', '--noprofile', '--norc', '-c', 'env; echo env-done; sleep 30'] }))
      const textB = collect(b)
      expect(await second.runtime.sessionHostPid()).toBe(hostPid)
      await eventually(() => textB().includes('env-done'), 'the second env listing')
      expect(textB()).not.toContain(secret)
      expect(textB()).not.toContain('first-client-plain')
      await Promise.all([a.terminate(), b.terminate()])
    } finally {
      process.env = saved
      await first?.dispose()
      await second?.dispose()
    }
  }, 60_000)
})

describe('a forged or broken session host cannot crash the client', () => {
  // Was a hole (fixed: describePeerValue, guarded frame handling, LOGGED_REFUSALS, HELLO_DEADLINE_MS): the client shares FrameChannel with the session host, so the same crash applies the
  // other way: anything that speaks on the socket (a buggy or forged session host, a `connect`
  // command's far end such as a compromised build box) can send a reply whose `id` is 200 000
  // nested arrays; SessionHostClient#reply quotes it with `JSON.stringify(reply.id)` (recursive:
  // RangeError), inside the socket's 'data' handler, and the AGENT's process gets an uncaught
  // exception (an exit's `terminal` does the same; a ~1 MiB id string overflows the error frame
  // instead). Fix as for the session host: describe non-scalars by type, bound quoted input, and
  // catch in FrameChannel's dispatch and send().
  it('a peer sending a reply whose id is 200 000 nested arrays does not throw into the agent', async () => {
    const dir = join(hostRuntimeDir(process.getuid?.() ?? -1), `test-forged-${randomBytes(5).toString('hex')}`)
    const socketPath = join(dir, 'session-host.sock')
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    // The client runs in a child process, so its crash is observed rather than suffered.
    const script = `
        import('dsh-subprocess-remote').then(async (remote) => {
          const { Context } = await import('@deepseek-ai/cordis')
          const root = new Context()
          await root.plugin(remote, { socketPath: ${JSON.stringify(socketPath)}, startTimeoutMs: 5000 })
          process.on('uncaughtException', (error) => { console.log('UNCAUGHT ' + error.message.slice(0, 80)); process.exit(3) })
          await root.subprocess.spawnTerminal({ argv: ['true'], cwd: '/', rows: 24, cols: 80, graceMs: 100 }).catch((error) => console.log('REJECTED ' + error.code))
          console.log('CLIENT-ALIVE')
          process.exit(0)
        })`
    mkdirSync(dir, { mode: 0o700 })
    const hello = (() => {
      const body = Buffer.from(
        JSON.stringify({ type: 'hello', version: 2, role: 'session-host', features: ['binary-output', 'credit'], pid: 1, windowBytes: 1024 }),
      )
      const head = Buffer.alloc(5)
      head.writeUInt32BE(body.length + 1)
      head[4] = 1
      return Buffer.concat([head, body])
    })()
    const evil = (() => {
      const depth = 200_000
      const body = Buffer.from(`{"type":"reply","id":${'['.repeat(depth)}${']'.repeat(depth)},"ok":true,"result":null}`)
      const head = Buffer.alloc(5)
      head.writeUInt32BE(body.length + 1)
      head[4] = 1
      return Buffer.concat([head, body])
    })()
    const server = createServer((socket) => {
      socket.on('error', () => {})
      // Then it hangs up, so the spawn it never answers ends (SESSION_HOST_LOST) and the client can say it lived.
      socket.end(Buffer.concat([hello, evil]))
    })
    await new Promise<void>((resolve) => server.listen(socketPath, resolve))
    chmodSync(socketPath, 0o600)
    try {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', '--conditions=dsh-source', '--input-type=module', '-e', script], {
        cwd: fileURLToPath(new URL('..', import.meta.url)),
      }).catch((error: { stdout: string }) => error)
      expect(stdout).not.toContain('UNCAUGHT')
      expect(stdout).toContain('CLIENT-ALIVE')
    } finally {
      server.close()
    }
  }, 60_000)
})
