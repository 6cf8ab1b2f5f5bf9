// The terminal primitive: open, foreground inspection and teardown through dsh-subprocess-local,
// each next to the bare node-pty operation measured in the same run.
import { execFileSync, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { Context } from '@deepseek-ai/cordis'
import { children, eventually } from 'dsh-testkit'
import { isStdinWaitProven, type SubprocessTerminalHandle, type TerminalLimits } from '../../packages/subprocess/subprocess/src/index'
import * as local from '../../packages/subprocess/subprocess-local/src/index'
import { SttyModes } from '../../packages/subprocess/subprocess-local/src/internal'
import { collect, collectInterleaved, timed } from '../lib/measure'
import { treeReady } from '../lib/process-tree'
import { pty, type RawPty } from '../lib/raw-pty'
import type { BenchRow } from '../lib/types'

const PROMPT = 'B$ '
const ENV = { PS1: PROMPT, TERM: 'dumb', HISTFILE: '/dev/null' }
const BASH = ['bash', '--noprofile', '--norc', '-i']
const GRACE_MS = 3000
const TREE = `for i in $(seq 19); do sleep 700 & done; sh -c 'trap "" TERM; exec sleep 700' &\r`
const PYTHON = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim()

/** Bare node-pty bash: resolves once its prompt arrived. */
async function rawShell() {
  const term = pty.spawn('bash', BASH.slice(1), { cwd: tmpdir(), env: { PATH: process.env.PATH, ...ENV }, cols: 120, rows: 40, encoding: null })
  let text = ''
  term.onData((data: string | Buffer) => {
    text += data.toString()
  })
  const exited = new Promise<void>((resolve) => term.onExit(() => resolve()))
  await eventually(() => text.endsWith(PROMPT), 'raw prompt')
  return { term, exited, text: () => text }
}

/**
 * SIGHUP the raw shell until it exits. Re-sending is required even for the floor: readline loses a
 * SIGHUP that lands between its signal check and `pselect` (a few percent of shells at a prompt).
 */
async function hangUp(term: RawPty, exited: Promise<void>): Promise<void> {
  let done = false
  void exited.then(() => {
    done = true
  })
  for (let delay = 10; !done; delay = Math.min(delay * 2, 100)) {
    term.kill('SIGHUP')
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, delay))])
  }
}

/** Provider bash: resolves once its prompt arrived. With `limits`, it runs in cgroups of its own where the host allows. */
async function providerShell(ctx: Context, limits?: TerminalLimits): Promise<{ handle: SubprocessTerminalHandle; text: () => string }> {
  const handle = await ctx.subprocess.spawnTerminal({ argv: BASH, env: ENV, cwd: tmpdir(), rows: 40, cols: 120, graceMs: GRACE_MS, limits })
  let text = ''
  handle.onOutput((chunk) => {
    text += chunk.toString()
  })
  await eventually(() => text.endsWith(PROMPT), 'provider prompt')
  return { handle, text: () => text }
}

const WARMUP = 20

/** Time `count` foreground inspections of a handle, in µs. */
async function inspections(handle: SubprocessTerminalHandle, count: number, proven: boolean): Promise<number[]> {
  const samples: number[] = []
  for (let i = 0; i < count + WARMUP; i++) {
    const start = performance.now()
    const facts = await handle.inspectForeground()
    const elapsed = (performance.now() - start) * 1000
    if (proven && !(facts && isStdinWaitProven(facts))) throw new Error('bench: expected a proven stdin wait')
    if (i >= WARMUP) samples.push(elapsed)
  }
  return samples
}

/** Run `read` `count` times after a warm-up; samples in µs, plus the host's CPU per call (all threads). */
async function timedCalls(count: number, read: () => Promise<unknown>): Promise<{ samples: number[]; cpuUs: number }> {
  for (let i = 0; i < WARMUP; i++) await read()
  const samples: number[] = []
  const cpuBefore = process.cpuUsage()
  for (let i = 0; i < count; i++) {
    const start = performance.now()
    await read()
    samples.push((performance.now() - start) * 1000)
  }
  const cpu = process.cpuUsage(cpuBefore)
  return { samples, cpuUs: Math.round((cpu.user + cpu.system) / count) }
}

/**
 * The terminal's echo/canonical flags, read on request: the naive way (the host spawns `stty -g`
 * on the PTY master for every read: Node forks the host on its main thread), the provider's helper
 * shell alone, and a whole inspection with the flags next to the plain one.
 */
async function terminalModeRows(handle: SubprocessTerminalHandle): Promise<BenchRow[]> {
  const raw = await rawShell()
  const term = raw.term as RawPty & { fd: number; ptsName: string }
  const modes = new SttyModes()
  try {
    const spawnStty = () =>
      new Promise<void>((resolve, reject) => {
        const child = spawn('stty', ['-g'], { stdio: [term.fd, 'pipe', 'ignore'] })
        let out = ''
        child.stdout?.on('data', (chunk: Buffer) => {
          out += chunk.toString()
        })
        child.on('error', reject)
        child.on('close', () => (out.includes(':') ? resolve() : reject(new Error('bench: stty -g printed nothing'))))
      })
    const helperRead = async () => {
      if (!(await modes.read(term.ptsName, undefined))) throw new Error('bench: the helper read no modes')
    }
    const withModes = async () => {
      if (!(await handle.inspectForeground({ terminalModes: true }))?.terminalModes) throw new Error('bench: no terminal modes')
    }
    const spawned = await timedCalls(100, spawnStty)
    const helper = await timedCalls(100, helperRead)
    const plain = await timedCalls(200, () => handle.inspectForeground())
    const inspected = await timedCalls(200, withModes)
    return [
      {
        figure: 'raw: host spawns stty -g on the PTY master',
        unit: 'µs',
        samples: spawned.samples,
        note: `${spawned.cpuUs} µs of host CPU per read (the fork runs on the event loop's thread)`,
      },
      {
        figure: 'terminal modes: helper shell runs stty -g -F',
        unit: 'µs',
        floor: 'raw: host spawns stty -g on the PTY master',
        samples: helper.samples,
        note: `${helper.cpuUs} µs of host CPU per read; the fork and exec happen in the helper`,
      },
      {
        figure: 'inspectForeground({ terminalModes: true }): idle bash',
        unit: 'µs',
        floor: 'inspectForeground: idle bash',
        samples: inspected.samples,
        note: `${inspected.cpuUs} µs of host CPU per inspection (plain: ${plain.cpuUs} µs); the helper round trip overlaps the /proc pass`,
      },
    ]
  } finally {
    modes.dispose()
    await hangUp(raw.term, raw.exited)
  }
}

/** Open, inspect and close sessions with the provider, each next to the bare node-pty floor. */
export async function subprocess(): Promise<BenchRow[]> {
  const root = new Context()
  const fiber = await root.plugin(local, {})
  const rows: BenchRow[] = []
  const iterations = 15

  rows.push({
    figure: 'node-pty: spawn bash → prompt',
    unit: 'ms',
    samples: await collect(iterations, async () => {
      const start = performance.now()
      const { term, exited } = await rawShell()
      const elapsed = performance.now() - start
      await hangUp(term, exited)
      return elapsed
    }),
  })
  rows.push({
    figure: 'provider: spawnTerminal bash → prompt',
    unit: 'ms',
    floor: 'node-pty: spawn bash → prompt',
    samples: await collect(iterations, async () => {
      const start = performance.now()
      const { handle } = await providerShell(root)
      const elapsed = performance.now() - start
      await handle.terminate()
      return elapsed
    }),
  })

  // The cgroup launcher's cost on open: the same provider shell with and without limits, alternating.
  const LIMITS = { maxProcesses: 1024, maxMemoryBytes: 8 * 1024 ** 3 }
  const openLimited = (limits?: TerminalLimits) => async () => {
    const start = performance.now()
    const { handle } = await providerShell(root, limits)
    const elapsed = performance.now() - start
    await handle.terminate()
    return elapsed
  }
  const limited = await collectInterleaved(iterations, openLimited(), openLimited(LIMITS))
  const limitedProbe = await providerShell(root, LIMITS)
  await limitedProbe.handle.terminate()
  rows.push({ figure: 'provider: open, no limits (interleaved)', unit: 'ms', samples: limited.floor })
  rows.push({
    figure: 'provider: open with limits',
    unit: 'ms',
    floor: 'provider: open, no limits (interleaved)',
    note: limitedProbe.handle.limits.notApplied
      ? `not enforced here: ${limitedProbe.handle.limits.notApplied}`
      : 'cgroups per session: mkdir + limit writes, /bin/sh launcher joins, then execs bash',
    samples: limited.contender,
  })

  // The host-death watchdog: started right after a runtime loads (one spawn of /bin/sh), then one
  // registration line per open. A fresh runtime per sample, with exitCleanup off (no watchdog) and on,
  // opened at once: the worst case, since the watchdog's spawn then lands inside the first open.
  const firstOpen = (exitCleanup: boolean) => async () => {
    const fresh = new Context()
    const freshFiber = await fresh.plugin(local, { exitCleanup })
    const start = performance.now()
    const { handle } = await providerShell(fresh)
    const elapsed = performance.now() - start
    await handle.terminate()
    await freshFiber.dispose()
    return elapsed
  }
  const unwatchedRoot = new Context()
  const unwatchedFiber = await unwatchedRoot.plugin(local, { exitCleanup: false })
  const openIn = (ctx: Context) => async () => {
    const start = performance.now()
    const { handle } = await providerShell(ctx)
    const elapsed = performance.now() - start
    await handle.terminate()
    return elapsed
  }
  const steady = await collectInterleaved(iterations, openIn(unwatchedRoot), openIn(root))
  await unwatchedFiber.dispose()
  rows.push({ figure: 'provider: open, no watchdog (interleaved)', unit: 'ms', samples: steady.floor, note: 'exitCleanup: false' })
  rows.push({
    figure: 'provider: open, watchdog running',
    unit: 'ms',
    floor: 'provider: open, no watchdog (interleaved)',
    note: 'one registration line to the watchdog per open, one more at close',
    samples: steady.contender,
  })
  const watched = await collectInterleaved(iterations, firstOpen(false), firstOpen(true))
  rows.push({ figure: 'provider: first open of a runtime, no watchdog (interleaved)', unit: 'ms', samples: watched.floor, note: 'exitCleanup: false' })
  rows.push({
    figure: 'provider: first open of a runtime, with the host-death watchdog',
    unit: 'ms',
    floor: 'provider: first open of a runtime, no watchdog (interleaved)',
    note: 'opened right after load: the watchdog (/bin/sh, detached) starts during this open; the session is registered',
    samples: watched.contender,
  })

  rows.push({
    figure: 'node-pty: SIGHUP idle bash → exit',
    unit: 'ms',
    note: 'SIGHUP re-sent every 10 ms until it lands (see hangUp)',
    samples: await collect(iterations, async () => {
      const { term, exited } = await rawShell()
      return timed(() => hangUp(term, exited))
    }),
  })
  rows.push({
    figure: 'provider: terminate() idle session',
    unit: 'ms',
    floor: 'node-pty: SIGHUP idle bash → exit',
    note: 'verified quiescent: tree, session and terminal-holder sweeps before and after the shell',
    samples: await collect(iterations, async () => {
      const { handle } = await providerShell(root)
      return timed(() => handle.terminate())
    }),
  })

  rows.push({
    figure: 'node-pty: SIGKILL 20 known pids + SIGHUP → exit',
    unit: 'ms',
    note: 'the floor knows the pids in advance and verifies nothing',
    samples: await collect(
      8,
      async () => {
        const { term, exited } = await rawShell()
        term.write(TREE)
        const kids = await treeReady(term.pid)
        return timed(async () => {
          for (const kid of kids) process.kill(kid, 'SIGKILL')
          await hangUp(term, exited)
        })
      },
      1,
    ),
  })
  rows.push({
    figure: 'provider: terminate() 20-process tree, 1 TERM-ignorer',
    unit: 'ms',
    floor: 'node-pty: SIGKILL 20 known pids + SIGHUP → exit',
    note: `graceMs ${GRACE_MS}: the ignorer is SIGKILLed at once, the others die on SIGTERM, so no grace is spent`,
    samples: await collect(
      8,
      async () => {
        const { handle } = await providerShell(root)
        await handle.write(TREE)
        const kids = await treeReady(handle.pid)
        const elapsed = await timed(() => handle.terminate())
        if (kids.some((kid) => children(handle.pid).includes(kid))) throw new Error('bench: tree survived')
        return elapsed
      },
      1,
    ),
  })

  const probe = await providerShell(root)
  rows.push({
    figure: 'raw: one read of /proc/<pid>/stat',
    unit: 'µs',
    samples: await collect(
      300,
      async () => {
        const start = performance.now()
        readFileSync(`/proc/${probe.handle.pid}/stat`, 'latin1')
        return (performance.now() - start) * 1000
      },
      20,
    ),
  })
  rows.push({
    figure: 'inspectForeground: idle bash',
    unit: 'µs',
    floor: 'raw: one read of /proc/<pid>/stat',
    samples: await inspections(probe.handle, 300, true),
  })
  rows.push(...(await terminalModeRows(probe.handle)))
  for (const [label, command, ready] of [
    ['python3 -q REPL', `${PYTHON} -q\r`, '>>> '],
    ['node REPL (11 threads)', 'node --no-warnings\r', '> '],
  ] as const) {
    const from = probe.text().length
    await probe.handle.write(command)
    await eventually(() => probe.text().slice(from).endsWith(ready), label, 15_000)
    let facts = await probe.handle.inspectForeground()
    for (let i = 0; i < 200 && !(facts && isStdinWaitProven(facts) && !facts.isShellGroup); i++) facts = await probe.handle.inspectForeground()
    const cpuBefore = process.cpuUsage()
    const samples = await inspections(probe.handle, 200, true)
    const cpu = process.cpuUsage(cpuBefore)
    rows.push({
      figure: `inspectForeground: ${label}`,
      unit: 'µs',
      floor: 'raw: one read of /proc/<pid>/stat',
      samples,
      note: `${facts?.threads.length} thread(s) sampled; ${Math.round((cpu.user + cpu.system) / (samples.length + WARMUP))} µs of process CPU (all threads) per inspection`,
    })
    await probe.handle.signalForeground('SIGTERM')
    await eventually(() => probe.text().endsWith(PROMPT), 'the prompt again', 15_000)
  }
  await probe.handle.terminate()
  await fiber.dispose()
  return rows
}
