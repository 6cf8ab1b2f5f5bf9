// The shell backend (dsh-terminal-bash through ctx.terminals and the node-pty provider) against a raw
// node-pty floor: a bash whose PROMPT_COMMAND prints the same OSC 133;D marker, read event-driven.
import { execFileSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { Context, type Fiber } from '@deepseek-ai/cordis'
import { children } from 'dsh-testkit'
import * as agentPlugin from '../../packages/agent/src/index'
import * as policyPlugin from '../../packages/sandbox/sandbox-policy/src/index'
import * as localPlugin from '../../packages/subprocess/subprocess-local/src/index'
import * as bashPlugin from '../../packages/terminal/terminal-bash/src/index'
import * as terminalPlugin from '../../packages/terminal/terminal/src/index'
import type { TerminalSendResult, TerminalSessionId } from '../../packages/terminal/terminal/src/index'
import { collect, collectInterleaved, timed } from '../lib/measure'
import { treeReady } from '../lib/process-tree'
import { pty, type RawPty } from '../lib/raw-pty'
import type { BenchRow } from '../lib/types'

const PYTHON = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim()
const FLOOD = 'head -c 20000000 /dev/urandom | base64'
const FLOOD_BYTES = 27_017_547 // base64 of 20 MB: 26 666 668 characters plus 350 879 newlines
const TREE = `for i in $(seq 19); do sleep 700 & done; sh -c 'trap "" TERM; exec sleep 700' &`
const MARKER_PROMPT = /\x1b\]133;D;\d+\x07dsh> $/
const RAW_ENV = {
  PATH: process.env.PATH,
  TERM: 'dumb',
  HISTFILE: '',
  PS1: 'dsh> ',
  PROMPT_COMMAND: `printf '\\033]133;D;%s\\007' "$?"`,
}
const CONFIG = { disposeGraceMs: 3_000 }

/** Raw floor: bash in node-pty, settled the moment marker + prompt end the stream. */
class RawShell {
  readonly term: RawPty
  readonly exited: Promise<void>
  #tail = ''
  #bytes = 0
  #waiter: ((bytes: number) => void) | undefined
  #pattern: RegExp = MARKER_PROMPT

  constructor() {
    this.term = pty.spawn('bash', ['--noprofile', '--norc', '-i'], { cwd: tmpdir(), env: RAW_ENV, cols: 160, rows: 40, encoding: null })
    this.exited = new Promise((resolve) => this.term.onExit(() => resolve()))
    this.term.onData((data: string | Buffer) => {
      const text = data.toString('latin1')
      this.#bytes += data.length
      this.#tail = (this.#tail + text).slice(-256)
      if (this.#waiter && this.#pattern.test(this.#tail)) {
        const done = this.#waiter
        this.#waiter = undefined
        done(this.#bytes)
      }
    })
  }

  /** Resolves (with the bytes received so far) once the stream ends with `pattern`. */
  next(pattern: RegExp = MARKER_PROMPT): Promise<number> {
    this.#pattern = pattern
    if (pattern.test(this.#tail)) return Promise.resolve(this.#bytes)
    return new Promise((resolve) => (this.#waiter = resolve))
  }

  /** Write a line and wait for the prompt that follows it. */
  async run(line: string, pattern: RegExp = MARKER_PROMPT): Promise<number> {
    this.#tail = ''
    const next = this.next(pattern)
    this.term.write(`${line}\r`)
    return next
  }

  /** SIGHUP until the shell is gone (readline can lose one that lands before pselect). */
  async close(): Promise<void> {
    let done = false
    void this.exited.then(() => (done = true))
    for (let delay = 10; !done; delay = Math.min(delay * 2, 100)) {
      this.term.kill('SIGHUP')
      await Promise.race([this.exited, new Promise((resolve) => setTimeout(resolve, delay))])
    }
  }

  static async open(): Promise<RawShell> {
    const shell = new RawShell()
    await shell.next()
    return shell
  }
}

/** The real composition with one agent. */
async function mount() {
  const root = new Context()
  const fibers: Fiber[] = []
  fibers.push(await root.plugin(agentPlugin))
  fibers.push(await root.plugin(localPlugin, {}))
  // Unconfined, like the raw floor: the backend's own cost is what this suite measures.
  fibers.push(await root.plugin(policyPlugin, { mode: 'danger-full-access', workspaceRoot: tmpdir() }))
  // One agent opens 50 sessions at once below, over the default per-agent bound of 16.
  fibers.push(await root.plugin(terminalPlugin, { maxSessionsPerAgent: 64 }))
  fibers.push(await root.plugin(bashPlugin, CONFIG))
  const agent = await root.agents.create()
  const terminals = root.terminals
  return {
    open: async () => (await terminals.spawn(agent, { type: 'shell', cwd: tmpdir() })).sessionId,
    run: async (id: TerminalSessionId, text: string) => {
      const send = terminals.startSend(agent, id, { text, submit: true })
      const result = await send.done
      await send.released // the session takes the next send once the reservation is dropped
      return result
    },
    close: (id: TerminalSessionId) => terminals.kill(agent, id),
    dispose: async () => {
      await agent.dispose()
      for (const fiber of fibers.reverse()) await fiber.dispose()
    },
  }
}
type Stack = Awaited<ReturnType<typeof mount>>

function exact(result: TerminalSendResult, output: string, what: string): void {
  if (result.waitReason !== 'stdin_read' || !result.viewport.includes(output)) {
    throw new Error(`bench: ${what} did not settle exactly: ${JSON.stringify({ ...result, viewport: result.viewport.slice(-200) })}`)
  }
}

/** Microsecond samples of `count` round trips each of a floor and a contender, alternating. */
async function roundTripPairs(count: number, floor: () => Promise<unknown>, contender: () => Promise<unknown>) {
  const micros = (run: () => Promise<unknown>) => async () => (await timed(run)) * 1000
  return collectInterleaved(count, micros(floor), micros(contender), 20)
}

/** Microsecond samples of `count` round trips of `run`. */
async function roundTrips(count: number, run: () => Promise<unknown>): Promise<number[]> {
  return collect(count, async () => (await timed(run)) * 1000, 20)
}

/** Open, round trips, REPL, flood, close and 50 concurrent sessions, each next to the raw floor. */
export async function shell(): Promise<BenchRow[]> {
  const rows: BenchRow[] = []
  const stack: Stack = await mount()
  try {
    const opens = await collectInterleaved(
      20,
      async () => {
        const start = performance.now()
        const raw = await RawShell.open()
        const elapsed = performance.now() - start
        await raw.close()
        return elapsed
      },
      async () => {
        const start = performance.now()
        const id = await stack.open()
        const elapsed = performance.now() - start
        await stack.close(id)
        return elapsed
      },
      2,
    )
    rows.push({ figure: 'raw: open bash → marker prompt', unit: 'ms', samples: opens.floor })
    rows.push({ figure: 'shell: terminals.spawn (open)', unit: 'ms', floor: 'raw: open bash → marker prompt', samples: opens.contender })

    const raw = await RawShell.open()
    const id = await stack.open()
    // Floor and backend alternate send by send, so drift in the host's load hits both alike.
    const trueTrips = await roundTripPairs(
      300,
      () => raw.run('true'),
      async () => exact(await stack.run(id, 'true'), 'dsh> ', '`true`'),
    )
    rows.push({ figure: 'raw: `true` round trip', unit: 'µs', samples: trueTrips.floor })
    rows.push({ figure: 'shell: `true` round trip', unit: 'µs', floor: 'raw: `true` round trip', samples: trueTrips.contender })
    const echoTrips = await roundTripPairs(
      200,
      () => raw.run('echo bench-echo'),
      async () => exact(await stack.run(id, 'echo bench-echo'), 'bench-echo\n', '`echo`'),
    )
    rows.push({ figure: 'raw: `echo` round trip', unit: 'µs', samples: echoTrips.floor })
    rows.push({ figure: 'shell: `echo` round trip', unit: 'µs', floor: 'raw: `echo` round trip', samples: echoTrips.contender })

    // Python: the floor gets a marker in sys.ps1; the backend has nothing but the stdin-wait proof.
    const ps1 = "import sys; sys.ps1 = '\\x1b]133;D;0\\x07dsh> '"
    await raw.run(`${PYTHON} -q -i -c "${ps1}"`)
    await stack.run(id, `${PYTHON} -q`)
    rows.push({ figure: 'raw: python `1+1` (marker in sys.ps1)', unit: 'µs', samples: await roundTrips(100, () => raw.run('1+1')) })
    rows.push({
      figure: 'shell: python `1+1` (stdin_read)',
      unit: 'µs',
      floor: 'raw: python `1+1` (marker in sys.ps1)',
      samples: await roundTrips(100, async () => exact(await stack.run(id, '1+1'), '2\n>>> ', 'python `1+1`')),
    })
    await raw.run('exit()')
    await stack.run(id, 'exit()')

    rows.push({
      figure: 'raw: 27 MB flood',
      unit: 'MiB/s',
      higherIsBetter: true,
      samples: await collect(
        3,
        async () => {
          const elapsed = await timed(() => raw.run(FLOOD))
          return FLOOD_BYTES / 1_048_576 / (elapsed / 1000)
        },
        1,
      ),
    })
    let peakGrowth = 0
    let floods = 0
    rows.push({
      figure: 'shell: 27 MB flood',
      unit: 'MiB/s',
      higherIsBetter: true,
      floor: 'raw: 27 MB flood',
      samples: await collect(
        3,
        async () => {
          const base = process.memoryUsage().rss
          let peak = base
          const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10)
          const elapsed = await timed(async () => exact(await stack.run(id, FLOOD), 'dsh> ', 'the flood'))
          clearInterval(sampler)
          // The warm-up flood grows V8's heap once; the measured ones show whether memory stays bounded.
          if (floods++ > 0) peakGrowth = Math.max(peakGrowth, peak - base)
          return FLOOD_BYTES / 1_048_576 / (elapsed / 1000)
        },
        1,
      ),
    })
    rows[rows.length - 1] = {
      ...rows[rows.length - 1]!,
      note: `peak RSS growth per flood after the warm-up one ${(peakGrowth / 1_048_576).toFixed(1)} MiB (scrollbackMaxBytes 4 MiB, result capped at 256 KiB)`,
    }
    await raw.close()
    await stack.close(id)

    rows.push({
      figure: 'raw: SIGHUP idle bash → exit',
      unit: 'ms',
      samples: await collect(15, async () => {
        const shell = await RawShell.open()
        return timed(() => shell.close())
      }),
    })
    rows.push({
      figure: 'shell: close idle session',
      unit: 'ms',
      floor: 'raw: SIGHUP idle bash → exit',
      note: 'verified quiescent (the provider sweeps the tree before and after the shell)',
      samples: await collect(15, async () => {
        const session = await stack.open()
        return timed(() => stack.close(session))
      }),
    })

    rows.push({
      figure: 'raw: SIGKILL 20 known pids + SIGHUP',
      unit: 'ms',
      samples: await collect(
        6,
        async () => {
          const shell = await RawShell.open()
          shell.term.write(`${TREE}\r`)
          const kids = await treeReady(shell.term.pid)
          return timed(async () => {
            for (const kid of kids) process.kill(kid, 'SIGKILL')
            await shell.close()
          })
        },
        1,
      ),
    })
    rows.push({
      figure: 'shell: close 20-process tree, 1 TERM-ignorer',
      unit: 'ms',
      floor: 'raw: SIGKILL 20 known pids + SIGHUP',
      note: `disposeGraceMs ${CONFIG.disposeGraceMs}`,
      samples: await collect(
        6,
        async () => {
          const session = await stack.open()
          await stack.run(session, TREE)
          const pid = Number((await stack.run(session, 'echo "pid=$$"')).viewport.match(/pid=(\d+)/)?.[1])
          const kids = await treeReady(pid)
          const elapsed = await timed(() => stack.close(session))
          if (kids.some((kid) => children(pid).includes(kid))) throw new Error('bench: tree survived')
          return elapsed
        },
        1,
      ),
    })

    // Heavy and sensitive to drift (load, our heap growing): floor and backend alternate per sample.
    const concurrent = await collectInterleaved(
      5,
      () =>
        timed(() =>
          Promise.all(
            Array.from({ length: 50 }, async (_, index) => {
              const shell = await RawShell.open()
              await shell.run(`echo token-${index}`)
              await shell.close()
            }),
          ),
        ),
      () =>
        timed(() =>
          Promise.all(
            Array.from({ length: 50 }, async (_, index) => {
              const session = await stack.open()
              exact(await stack.run(session, `echo token-${index}`), `token-${index}\n`, `session ${index}`)
              await stack.close(session)
            }),
          ),
        ),
    )
    rows.push({ figure: 'raw: 50 × (open + echo + close), concurrent', unit: 'ms', samples: concurrent.floor })
    rows.push({
      figure: 'shell: 50 × (open + echo + close), concurrent',
      unit: 'ms',
      floor: 'raw: 50 × (open + echo + close), concurrent',
      note: 'every echo must settle as stdin_read with its own output, or the bench fails; floor and shell alternate per sample',
      samples: concurrent.contender,
    })
  } finally {
    await stack.dispose()
  }
  return rows
}
