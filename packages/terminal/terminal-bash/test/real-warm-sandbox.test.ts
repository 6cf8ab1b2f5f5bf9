import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { probeBwrap } from 'dsh-sandbox-local/internal'
import type { SpawnWrapper, SubprocessTerminalHandle, TerminalSpawnSpec } from 'dsh-subprocess'
import type { LocalSubprocessRuntime } from 'dsh-subprocess-local/internal'
import { children, eventually, installed, isAlive } from 'dsh-testkit'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { sandboxWrapper } from '../src/sandbox/boundary'
import { PATIENT, startStack, type Stack } from './support/stack'

/*
 * Warm sandboxes against real bwrap, real cgroups and real processes, as root: a confined session
 * opened in a sandbox started ahead must be the session a cold open makes, and nothing an attacker
 * inside a session can do may reach one before it is handed out, or make a stale one be used.
 */

const bwrapUnavailable = await probeBwrap('bwrap').then(
  () => undefined,
  (error: unknown) => (error instanceof Error ? error.message : String(error)),
)
if (process.env.CI === 'true' && bwrapUnavailable !== undefined) throw new Error(`bubblewrap must work on CI: ${bwrapUnavailable}`)
if (process.env.CI === 'true' && !installed('perl')) throw new Error('perl is required for the warm-sandbox tests in CI')
if (process.env.CI === 'true' && !installed('git')) throw new Error('git is required for the warm-sandbox tests in CI')
/** Warm launchers need enforced limits (root's cgroups) and perl; the sandbox needs bwrap. */
const canWarm = bwrapUnavailable === undefined && process.getuid?.() === 0 && installed('perl') && installed('git')

const tsx = createRequire(import.meta.url).resolve('tsx/cli')
const hostFixture = fileURLToPath(new URL('./fixtures/warm-sandbox-host.ts', import.meta.url))

const WARM_WAIT_MS = 30_000
const MiB = 1024 * 1024

let workspace = ''
let elsewhere = ''
let stack: Stack | undefined
let host: ChildProcess | undefined

beforeAll(async () => {
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'dsh-warm-sandbox-')))
  elsewhere = await realpath(await mkdtemp('/var/tmp/dsh-warm-elsewhere-'))
})

afterEach(async () => {
  host?.kill('SIGKILL')
  host = undefined
  await stack?.dispose()
  stack = undefined
})

afterAll(async () => {
  await rm(workspace, { recursive: true, force: true })
  await rm(elsewhere, { recursive: true, force: true })
})

/** A fresh directory in the workspace, for one test. */
async function project(name: string): Promise<string> {
  const dir = join(workspace, name)
  await mkdir(dir)
  return dir
}

async function confinedStack(root: string, sandbox: { privateHome?: boolean } = {}): Promise<{ stack: Stack; runtime: LocalSubprocessRuntime }> {
  stack = await startStack({ ...PATIENT, warmSandbox: true }, { policy: { mode: 'workspace-write', workspaceRoot: root }, sandbox })
  return { stack, runtime: stack.root.subprocess as LocalSubprocessRuntime }
}

/**
 * Open (and close) sessions until a sandbox started ahead waits: each open refills the pool, and a
 * workspace changed within the last second is not started ahead (its trace could miss a change).
 */
async function warmPids(stack: Stack, runtime: LocalSubprocessRuntime): Promise<number[]> {
  return eventually(
    async () => {
      const waiting = runtime.warmWrappedPids()
      if (waiting.length > 0) return waiting
      const opened = await stack.open()
      await stack.terminals.close(stack.agent, opened.sessionId)
      return false
    },
    'a warm sandbox',
    WARM_WAIT_MS,
  )
}

/** The pids cgroup directory `pid` is in (v1 `pids` hierarchy, else the v2 one), read while it runs. */
/** The pids of the sandboxes started ahead for `spec` once there is one; each spawn meanwhile refills (a workspace changed within the last second is not started ahead). */
async function warmSandboxFor(runtime: LocalSubprocessRuntime, spec: Parameters<LocalSubprocessRuntime['spawnTerminal']>[0]): Promise<number[]> {
  const key = (spec.wrapper as NonNullable<typeof spec.wrapper>).key
  return eventually(
    async () => {
      const pids = runtime.warmWrappedPids(key)
      if (pids.length > 0) return pids
      await (await runtime.spawnTerminal(spec)).terminate()
      return false
    },
    'a warm sandbox for the spec',
    WARM_WAIT_MS,
  )
}

function pidsCgroup(pid: number): string | undefined {
  const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n')
  const v1 = lines.find((line) => /^\d+:pids:/.test(line))
  if (v1) return `/sys/fs/cgroup/pids${v1.slice(v1.indexOf(':pids:') + 6)}`
  const v2 = lines.find((line) => line.startsWith('0::'))
  return v2 ? `/sys/fs/cgroup${v2.slice(3)}` : undefined
}

/** Tasks left in a cgroup directory: 0 once it was removed. */
function tasksIn(dir: string): number {
  if (!existsSync(dir)) return 0
  try {
    return Number(readFileSync(join(dir, 'pids.current'), 'utf8'))
  } catch {
    return 0
  }
}

/** Run a line in a session and return what it printed (the send must settle at the prompt). */
async function run(stack: Stack, id: Parameters<Stack['run']>[0], line: string): Promise<string> {
  const result = await stack.run(id, line)
  expect(result.waitReason).toBe('stdin_read')
  return result.viewport
}

describe.skipIf(!canWarm)('warm sandboxes (real bwrap, cgroups and processes, as root)', () => {
  describe('a session opened warm equals a cold confined one', () => {
    /** Everything the shell could tell about how it started, printed from inside after its first prompt. */
    const FACTS = [
      'echo "pid=$$"',
      // Minus ids and devices; /dev/console is each session's own terminal, so its pts number differs.
      'cut -d" " -f4- /proc/self/mountinfo | sed -E "s|^/[0-9]+ /dev/console |/N /dev/console |"',
      'grep -E "^(Seccomp|Cap|NoNewPrivs)" /proc/self/status',
      'cat /proc/self/uid_map /proc/self/gid_map /proc/self/limits',
      'sed -E "s/session-[0-9]+/session-N/" /proc/self/cgroup',
      'od -c /proc/$$/environ',
      'pwd; readlink /proc/$$/cwd',
      'stty -a',
      // What the sandbox's init and the shell hold, and that no process in it holds a PTY master.
      "echo fds: $(ls /proc/1/fd | sort -n | tr '\\n' ' ') / $(ls /proc/$$/fd | sort -n | tr '\\n' ' ')",
      'echo masters: $(ls -l /proc/[0-9]*/fd 2>/dev/null | grep -c ptmx)',
      "printf 'END-%s\\n' FACTS",
    ].join('; ')
    const TRICKY = `two\nlines \x7f a=b é ${'x'.repeat(5000)}`

    async function facts(shell: SubprocessTerminalHandle): Promise<{ greeting: string; facts: string }> {
      let text = ''
      shell.onOutput((chunk) => {
        text += chunk.toString('utf8')
      })
      await eventually(() => text.includes('PROMPT$ '), 'the first prompt', WARM_WAIT_MS)
      const greeting = text
      await shell.write(`${FACTS}\r`)
      const printed = await eventually(() => /\r\n([\s\S]*)END-FACTS\r\n/.exec(text.slice(greeting.length))?.[1], 'the facts', WARM_WAIT_MS)
      return { greeting, facts: printed }
    }

    it('pid namespace, mounts, seccomp, capabilities, uid map, rlimits, cgroup, environment, cwd, stty and the first bytes', async () => {
      const root = await project('equal')
      const cwd = await project('equal/sub')
      const { stack, runtime } = await confinedStack(root)
      const boundary = {
        policy: stack.root.sandboxPolicy.resolve(stack.agent),
        resolveCwd: async (_policy: unknown, path?: string) => path ?? root,
        sandbox: () => stack.root.sandbox,
      }
      const wrapper = sandboxWrapper(boundary, cwd) as SpawnWrapper
      expect(wrapper).toBeDefined()
      const spec: TerminalSpawnSpec = {
        argv: ['bash', '--noprofile', '--norc', '-i'],
        cwd,
        env: { PS1: 'PROMPT$ ', PROMPT_COMMAND: '', HISTFILE: '', TERM: 'xterm-256color', DSH_TEST_TRICKY: TRICKY, DSH_TEST_EMPTY: '' },
        rows: 31,
        cols: 103,
        graceMs: 1000,
        limits: { maxProcesses: 256, maxMemoryBytes: 512 * MiB },
        wrapper,
      }
      const cold = await runtime.spawnTerminal(spec)
      expect(runtime.warmWrappedPids()).not.toContain(cold.pid)
      const waiting = await warmSandboxFor(runtime, spec)
      const warm = await runtime.spawnTerminal(spec)
      expect(waiting).toContain(warm.pid)
      const [fresh, served] = [await facts(cold), await facts(warm)]
      expect(served.greeting).toBe(fresh.greeting)
      expect(served.facts).toBe(fresh.facts)
      // The comparison saw what it must: its own pid namespace, the filter, no capabilities, the tricky value whole.
      expect(served.facts).toContain('pid=2\r\n')
      // Nothing inherited from the host: no PTY master of another session anywhere in the sandbox.
      expect(served.facts).toContain('masters: 0\r\n')
      expect(served.facts).toMatch(/Seccomp:\s+2/)
      expect(served.facts).toMatch(/CapEff:\s+0+\r\n/)
      expect(served.facts).toContain('rows 31; columns 103')
      expect(served.facts).toContain(`${cwd}\r\n${cwd}\r\n`)
      await Promise.all([cold.terminate(), warm.terminate()])
    })
  })

  it('a sandbox started before the workspace gained a .git is not used: the new .git/config and hooks are read-only', async () => {
    const root = await project('gained-git')
    const { stack, runtime } = await confinedStack(root)
    await warmPids(stack, runtime)
    const attacker = await stack.open()
    // From inside a session, as root: a new repository whose config or hooks would run code outside.
    await run(stack, attacker.sessionId, 'git init -q sub && echo created')
    const before = runtime.warmWrappedPids()
    expect(before.length).toBeGreaterThan(0)
    const victim = await stack.open()
    expect(before).not.toContain(victim.pid)
    const config = await run(stack, victim.sessionId, 'echo "[core] fsmonitor = touch /tmp/pwned" >> sub/.git/config; echo hook > sub/.git/hooks/pre-commit')
    expect(config).toContain('sub/.git/config: Read-only file system')
    expect(config).toContain('sub/.git/hooks/pre-commit: Read-only file system')
    expect(readFileSync(join(root, 'sub/.git/config'), 'utf8')).not.toContain('fsmonitor')
  })

  it('a sandbox started before a credential appeared is not used: the new credential is masked', async () => {
    // Without a private home the real home shows, its credentials masked one by one, from what
    // exists when the sandbox is planned. A home of the test's own, outside the workspace.
    const root = await project('gained-credential')
    const home = await realpath(await mkdtemp('/var/tmp/dsh-warm-home-'))
    const realHome = process.env.HOME
    process.env.HOME = home
    try {
      const { stack, runtime } = await confinedStack(root, { privateHome: false })
      const before = await warmPids(stack, runtime)
      await mkdir(join(home, '.aws'))
      await writeFile(join(home, '.aws', 'credentials'), 'aws_secret_access_key = PLANTED-SECRET\n')
      const victim = await stack.open()
      expect(before).not.toContain(victim.pid)
      const seen = await run(stack, victim.sessionId, `cat '${home}/.aws/credentials' 2>&1; ls -A '${home}/.aws' | wc -l`)
      expect(seen).not.toContain('PLANTED-SECRET')
      expect(seen).toMatch(/\n0\n/)
    } finally {
      process.env.HOME = realHome
      await rm(home, { recursive: true, force: true })
    }
  })

  it('no session reaches a waiting sandbox: its FIFOs, its PTY and its processes are out of sight', async () => {
    const root = await project('reach')
    const { stack, runtime } = await confinedStack(root)
    await warmPids(stack, runtime)
    const attacker = await stack.open()
    // The sandbox attacked is one waiting after the attacker's open (which may have taken one).
    const [waiting] = await eventually(() => runtime.warmWrappedPids().length > 0 && runtime.warmWrappedPids(), 'a warm sandbox', WARM_WAIT_MS)
    const pty = readlinkOrEmpty(`/proc/${waiting}/fd/0`)
    expect(pty).toMatch(/^\/dev\/pts\/\d+$/)
    const seen = await run(
      stack,
      attacker.sessionId,
      [
        'ls -A /tmp/dsh-terminal 2>&1 | head -3',
        `ls ${pty} 2>&1`,
        `echo injected > ${pty} 2>&1`,
        'ls /dev/pts',
        // pid 1 is this session's own init, whose argv names the launcher when it was opened warm itself.
        'grep -l "dsh-warm-launche[r]" /proc/[0-9]*/cmdline 2>/dev/null | grep -vc "^/proc/1/"',
        'find / -xdev -name "sandbox-fifos-*" 2>/dev/null | wc -l',
      ].join('; '),
    )
    expect(seen).toContain('ls: cannot access')
    expect(seen).toContain(`cannot access '${pty}': No such file or directory`)
    expect(seen).toMatch(new RegExp(`bash: ${pty}: (No such file or directory|Permission denied)`))
    expect(seen).not.toMatch(/\n[1-9]\d*\n/)
    // Still waiting untouched: it is handed out next, and its session starts normally.
    expect(runtime.warmWrappedPids()).toContain(waiting)
    const next = await stack.open()
    expect(next.pid).toBe(waiting)
    expect(await run(stack, next.sessionId, 'echo ok-$((40+2))')).toContain('ok-42')
  })

  it('refuses a cwd outside the workspace or through a link out of it before any frame is written', async () => {
    const root = await project('cwd')
    await symlink(elsewhere, join(root, 'out'))
    const { stack, runtime } = await confinedStack(root)
    const waiting = await warmPids(stack, runtime)
    for (const cwd of [elsewhere, join(root, 'out'), 'out']) {
      await expect(stack.open({ cwd })).rejects.toMatchObject({ code: 'CWD_OUTSIDE_WORKSPACE' })
    }
    expect(runtime.warmWrappedPids()).toEqual(waiting)
  })

  it('the launcher inside stays confined whatever cwd a frame names (outside, or a link out)', async () => {
    const root = await project('frame')
    await symlink(elsewhere, join(root, 'out'))
    const { stack, runtime } = await confinedStack(root)
    const boundary = {
      policy: stack.root.sandboxPolicy.resolve(stack.agent),
      resolveCwd: async (_policy: unknown, path?: string) => path ?? root,
      sandbox: () => stack.root.sandbox,
    }
    // The subprocess layer writes any cwd it is given: the sandbox is what holds.
    for (const cwd of [elsewhere, join(root, 'out')]) {
      const wrapper = sandboxWrapper(boundary, root) as SpawnWrapper
      const spec: TerminalSpawnSpec = {
        argv: ['bash', '--noprofile', '--norc', '-i'],
        cwd,
        env: { PS1: 'PROMPT$ ', PROMPT_COMMAND: '' },
        rows: 24,
        cols: 80,
        graceMs: 1000,
        limits: { maxProcesses: 256 },
        wrapper,
      }
      const waiting = await warmSandboxFor(runtime, spec)
      const shell = await runtime.spawnTerminal(spec)
      expect(waiting).toContain(shell.pid)
      let text = ''
      shell.onOutput((chunk) => {
        text += chunk.toString('utf8')
      })
      await eventually(() => text.includes('PROMPT$ '), 'the prompt', WARM_WAIT_MS)
      await shell.write("touch planted; grep Seccomp: /proc/self/status; printf 'END-%s\\n' X\r")
      const out = await eventually(() => /\r\n([\s\S]*)END-X/.exec(text)?.[1], 'the output', WARM_WAIT_MS)
      expect(out).toContain('Read-only file system')
      expect(out).toMatch(/Seccomp:\s+2/)
      expect(existsSync(join(elsewhere, 'planted'))).toBe(false)
      await shell.terminate()
    }
  })

  for (const target of ['init', 'bwrap'] as const) {
    it(`a warm sandbox whose ${target} is killed while it waits: the next open goes cold and nothing is left`, async () => {
      const root = await project(`killed-${target}`)
      const { stack, runtime } = await confinedStack(root)
      const waiting = await warmPids(stack, runtime)
      const victims = waiting.map((pid) => ({ pid, init: children(pid)[0], cgroup: pidsCgroup(pid) }))
      for (const victim of victims) {
        expect(victim.init).toBeDefined()
        process.kill(target === 'init' ? victim.init! : victim.pid, 'SIGKILL')
      }
      await eventually(() => victims.every((victim) => !runtime.warmWrappedPids().includes(victim.pid)), 'the killed sandboxes to be dropped')
      const next = await stack.open()
      expect(waiting).not.toContain(next.pid)
      expect(await run(stack, next.sessionId, 'echo cold-$((1+1))')).toContain('cold-2')
      for (const victim of victims) {
        await eventually(() => !isAlive(victim.pid) && !isAlive(victim.init!), 'the killed sandbox to be gone')
        await eventually(() => tasksIn(victim.cgroup!) === 0, 'its cgroup to hold nothing')
      }
    })
  }

  it('a host killed with warm sandboxes waiting leaves nothing running (the watchdog ends them)', async () => {
    const root = await project('host-death')
    host = spawn(process.execPath, [tsx, '--conditions=dsh-source', hostFixture, root], { stdio: ['ignore', 'pipe', 'inherit'] })
    let stdout = ''
    host.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    const line = await eventually(() => stdout.includes('\n') && stdout.slice(0, stdout.indexOf('\n')), 'the host to report its warm sandboxes', 60_000)
    const started = JSON.parse(line) as { host: number; warm: number[] }
    expect(started.warm.length).toBeGreaterThan(0)
    const tree = started.warm.flatMap((pid) => [pid, ...children(pid)])
    const cgroups = started.warm.map(pidsCgroup)
    process.kill(started.host, 'SIGKILL')
    await eventually(() => tree.every((pid) => !isAlive(pid)), 'every process of the warm sandboxes to be gone', 20_000)
    for (const dir of cgroups) await eventually(() => tasksIn(dir!) === 0, 'their cgroups to hold nothing', 20_000)
  })
})

function readlinkOrEmpty(path: string): string {
  try {
    return execFileSync('readlink', [path], { encoding: 'utf8' }).trim()
  } catch {
    return ''
  }
}
