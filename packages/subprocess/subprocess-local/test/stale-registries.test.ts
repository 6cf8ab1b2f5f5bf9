import { spawn } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eventually, isAlive } from 'dsh-testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { REGISTRY_PREFIX, removeStaleRegistries, STALE_REGISTRY_MS } from '../src/watchdog/stale-registries'

const ROOT = process.getuid?.() === 0
const dirs: string[] = []

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A scratch folder standing for the temporary directory. */
function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-stale-test-'))
  dirs.push(dir)
  return dir
}

/** A pid no process has: a child that exited and was reaped. */
async function deadPid(): Promise<number> {
  const child = spawn('true')
  await new Promise((resolve) => child.once('exit', resolve))
  return child.pid!
}

/** A registration directory for host `pid` in `dir`, with one registration, last touched `ageMs` ago. */
function registry(dir: string, pid: number, ageMs: number, suffix = 'Ab12Cd'): string {
  const path = join(dir, `${REGISTRY_PREFIX}${pid}-${suffix}`)
  mkdirSync(path)
  writeFileSync(join(path, '4242'), '123\n')
  const at = (Date.now() - ageMs) / 1000
  utimesSync(path, at, at)
  return path
}

describe('stale watchdog registries', () => {
  it('removes a dead host’s old directory and keeps a live host’s, a fresh one and what is not a registry', async () => {
    const dir = scratch()
    const dead = await deadPid()
    const old = STALE_REGISTRY_MS + 5_000
    const stale = registry(dir, dead, old)
    const live = registry(dir, process.pid, old)
    const fresh = registry(dir, dead, 1_000, 'Zz99Yy')
    const other = join(dir, 'dsh-watchdog-notapid')
    mkdirSync(other)
    expect(removeStaleRegistries(dir)).toBe(1)
    expect(existsSync(stale)).toBe(false)
    for (const kept of [live, fresh, other]) expect(existsSync(kept)).toBe(true)
  })

  it('never follows a symlink named like a registry, nor removes another user’s directory', async () => {
    const dir = scratch()
    const dead = await deadPid()
    const target = join(dir, 'precious')
    mkdirSync(target)
    writeFileSync(join(target, 'keep'), 'x')
    const link = join(dir, `${REGISTRY_PREFIX}${dead}-Ln1234`)
    symlinkSync(target, link)
    const at = (Date.now() - STALE_REGISTRY_MS * 2) / 1000
    if (ROOT) {
      const foreign = registry(dir, dead, STALE_REGISTRY_MS * 2, 'Fo1234')
      chownSync(foreign, 65534, 65534)
      utimesSync(foreign, at, at)
      expect(removeStaleRegistries(dir)).toBe(0)
      expect(existsSync(foreign)).toBe(true)
    } else expect(removeStaleRegistries(dir)).toBe(0)
    expect(existsSync(join(target, 'keep'))).toBe(true)
  })

  it('a host killed together with its watchdog leaves its directory; the sweep (run before a process’s first watchdog) removes it once it is old, not before', async () => {
    // A host process with a watchdog (its temporary directory a scratch one), both SIGKILLed.
    const dir = scratch()
    const script = `
      import { HostWatchdog } from ${JSON.stringify(new URL('../src/watchdog/watchdog.ts', import.meta.url).pathname)}
      const watchdog = new HostWatchdog({ warn: () => {} })
      watchdog.start()
      console.log(JSON.stringify({ registry: watchdog.registry, watchdog: watchdog.pid }))
      setInterval(() => {}, 1000)
    `
    const host = spawn(process.execPath, ['--import', 'tsx', '--conditions=dsh-source', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, TMPDIR: dir },
    })
    let out = ''
    host.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()))
    const started = await eventually(
      () => (out.includes('}') ? (JSON.parse(out) as { registry: string; watchdog: number }) : undefined),
      'the host’s watchdog',
      20_000,
    )
    expect(started.registry).toMatch(new RegExp(`^${dir}/${REGISTRY_PREFIX}${host.pid}-`))
    const reaped = new Promise((resolve) => host.once('exit', resolve))
    process.kill(started.watchdog, 'SIGKILL')
    host.kill('SIGKILL')
    // Reaped: a zombie still answers kill(pid, 0), and the sweep takes it for alive.
    await reaped
    await eventually(() => !isAlive(host.pid!) && !isAlive(started.watchdog), 'both to die')
    expect(existsSync(started.registry)).toBe(true)
    // Not yet: a watchdog of a host that just died may still be reading it.
    expect(removeStaleRegistries(dir)).toBe(0)
    expect(existsSync(started.registry)).toBe(true)
    expect(removeStaleRegistries(dir, Date.now() + STALE_REGISTRY_MS + 1_000)).toBe(1)
    expect(existsSync(started.registry)).toBe(false)
  }, 30_000)
})
