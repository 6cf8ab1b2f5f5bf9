// The shell backend (dsh-terminal-bash through ctx.terminals and the node-pty provider) against a raw
// node-pty floor: a bash whose PROMPT_COMMAND prints the same OSC 133;D marker, read event-driven.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { children, eventually } from 'dsh-testkit'
import { LinePattern } from '../../packages/basics/src/index'
import { collect, collectInterleaved, timed } from '../lib/measure'
import { treeReady } from '../lib/process-tree'
import { summarize } from '../lib/stats'
import { RawShell } from '../lib/raw-shell'
import { BACKEND_CONFIG, exact, mount, type Stack } from '../lib/shell-stack'
import type { BenchRow } from '../lib/types'

const PYTHON = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim()
const FLOOD = 'head -c 20000000 /dev/urandom | base64'
const FLOOD_BYTES = 27_017_547 // base64 of 20 MB: 26 666 668 characters plus 350 879 newlines
const TREE = `for i in $(seq 19); do sleep 700 & done; sh -c 'trap "" TERM; exec sleep 700' &`
/** Prints `ready` without the command line's echo containing it. */
const READY = "printf 'r%s\\n' eady"
/** `p50(samples) − p50(floor)` of two µs rows, in ms, for the notes. */
function extraMs(samples: readonly number[], floor: readonly number[]): string {
  return `${((summarize(samples).p50 - summarize(floor).p50) / 1000).toFixed(2)} ms`
}

/**
 * The cheapest raw look at what runs in front of a shell: its terminal's foreground group from
 * `/proc/<shell>/stat`, then that process's stat (name) and `syscall` (what it waits in).
 */
function rawForeground(shellPid: number): { name: string; syscall: number } {
  const fields = (pid: number) => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), rest: stat.slice(stat.lastIndexOf(')') + 2).split(' ') }
  }
  const front = Number(fields(shellPid).rest[5]) // tpgid: state ppid pgrp session tty_nr tpgid
  const { name } = fields(front)
  return { name, syscall: Number.parseInt(readFileSync(`/proc/${front}/syscall`, 'latin1'), 10) }
}

/** Microsecond samples of `count` round trips each of a floor and a contender, alternating. */
async function roundTripPairs(count: number, floor: () => Promise<unknown>, contender: () => Promise<unknown>) {
  const micros = (run: () => Promise<unknown>) => async () => (await timed(run)) * 1000
  return collectInterleaved(count, micros(floor), micros(contender), 20)
}

/**
 * Like `collectInterleaved` for any number of contenders: one sample of each per round, the order
 * rotated every round so none always goes first, after `warmup` unmeasured rounds.
 */
async function collectRotating(count: number, contenders: readonly (() => Promise<number>)[], warmup = 1): Promise<number[][]> {
  for (let i = 0; i < warmup; i++) for (const run of contenders) await run()
  const samples = contenders.map(() => [] as number[])
  for (let i = 0; i < count; i++) {
    for (let k = 0; k < contenders.length; k++) {
      const index = (i + k) % contenders.length
      samples[index]!.push(await contenders[index]!())
    }
  }
  return samples
}

/** 20 opens (and closes) of `stack`'s sessions, alternating with the raw floor's, timed to the prompt. */
function opensBeside(stack: Stack) {
  const timedOpen = async (open: () => Promise<() => Promise<unknown>>) => {
    const start = performance.now()
    const close = await open()
    const elapsed = performance.now() - start
    await close()
    return elapsed
  }
  return collectInterleaved(
    20,
    () =>
      timedOpen(async () => {
        const raw = await RawShell.open()
        return () => raw.close()
      }),
    () =>
      timedOpen(async () => {
        const id = await stack.open()
        return () => stack.close(id)
      }),
    2,
  )
}

/** Open, round trips, REPL, flood, close and 50 concurrent sessions, each next to the raw floor. */
export async function shell(): Promise<BenchRow[]> {
  const rows: BenchRow[] = []
  const stack: Stack = await mount()
  // Only Python's `exit()` row runs in it; it idles meanwhile.
  const confined: Stack = await mount('workspace-write')
  try {
    const opens = await opensBeside(stack)
    rows.push({ figure: 'raw: open bash → marker prompt', unit: 'ms', samples: opens.floor })
    rows.push({ figure: 'shell: terminals.spawn (open)', unit: 'ms', floor: 'raw: open bash → marker prompt', samples: opens.contender })
    const confinedOpens = await opensBeside(confined)
    rows.push({
      figure: 'shell: open, confined (workspace-write, a git workspace)',
      unit: 'ms',
      floor: 'raw: open bash → marker prompt',
      samples: confinedOpens.contender,
      note: `bubblewrap, its seccomp filter and the mount check (the workspace's .git is protected); the raw floor of this pair, unconfined: ${summarize(confinedOpens.floor).p50.toFixed(1)} ms`,
    })

    const raw = await RawShell.open()
    const id = await stack.open()
    // Floor and backend alternate send by send, so drift in the host's load hits both alike. After
    // each backend send, a fresh look at the input state, timed apart from the round trip: the shell
    // is known idle at the prompt the send ended on, so it needs no inspection.
    const idleLooks: number[] = []
    const trueTrips = await collectInterleaved(
      300,
      async () => (await timed(() => raw.run('true'))) * 1000,
      async () => {
        const start = performance.now()
        const result = await stack.run(id, 'true')
        const sent = performance.now()
        const state = await stack.inputState(id)
        idleLooks.push((performance.now() - sent) * 1000)
        exact(result, 'dsh> ', '`true`', 'prompt')
        if (state?.kind !== 'prompt') throw new Error(`bench: inputState at the idle prompt: ${JSON.stringify(state)}`)
        return (sent - start) * 1000
      },
      20,
    )
    rows.push({ figure: 'raw: `true` round trip', unit: 'µs', samples: trueTrips.floor })
    rows.push({
      figure: 'shell: `true` round trip',
      unit: 'µs',
      floor: 'raw: `true` round trip',
      note: 'the result tells the input (prompt) from the marker: no inspection',
      samples: trueTrips.contender,
    })
    rows.push({
      figure: 'shell: inputState(), idle at the prompt',
      unit: 'µs',
      floor: 'raw: `true` round trip',
      note: 'one after each `true` send above (the warm-up ones dropped); a raw client knows this for free from the marker it read, so the floor is the raw `true` round trip and the ratio is the share of a round trip one fresh look costs',
      samples: idleLooks.slice(-trueTrips.contender.length),
    })
    const echoTrips = await roundTripPairs(
      200,
      () => raw.run('echo bench-echo'),
      async () => exact(await stack.run(id, 'echo bench-echo'), 'bench-echo\n', '`echo`'),
    )
    rows.push({ figure: 'raw: `echo` round trip', unit: 'µs', samples: echoTrips.floor })
    rows.push({ figure: 'shell: `echo` round trip', unit: 'µs', floor: 'raw: `echo` round trip', samples: echoTrips.contender })

    // A fresh look while `sleep` runs in front: one inspection, told busy (proven not to read).
    raw.term.write('sleep 600\r')
    await eventually(() => rawForeground(raw.term.pid).name === 'sleep' || undefined, 'the raw shell running sleep')
    const sleeping = await stack.run(id, 'sleep 600', { idleMs: 200 })
    if (sleeping.waitReason !== 'inferred_idle' || sleeping.input?.kind !== 'busy') {
      throw new Error(`bench: \`sleep 600\` did not settle busy on silence: ${JSON.stringify(sleeping)}`)
    }
    const busyLooks = await roundTripPairs(
      200,
      async () => {
        if (rawForeground(raw.term.pid).name !== 'sleep') throw new Error('bench: sleep left the raw shell')
      },
      async () => {
        const state = await stack.inputState(id)
        if (state?.kind !== 'busy' || state.reading !== 'no' || state.program?.name !== 'sleep') {
          throw new Error(`bench: inputState with sleep in front: ${JSON.stringify(state)}`)
        }
      },
    )
    rows.push({ figure: 'raw: /proc stat of shell + stat, syscall of the one in front', unit: 'µs', samples: busyLooks.floor })
    rows.push({
      figure: 'shell: inputState(), `sleep 600` in front (busy)',
      unit: 'µs',
      floor: 'raw: /proc stat of shell + stat, syscall of the one in front',
      note: 'one foreground inspection (no terminal flags: sleep is proven not to read); the floor is the three synchronous reads that name the process in front and its syscall, with no proof of what it waits on',
      samples: busyLooks.contender,
    })
    await raw.type('\x03')
    exact(await stack.run(id, '\x03', { submit: false }), 'dsh> ', 'Ctrl-C to `sleep 600`', 'prompt')

    // waitFor: the send settles on the first new line that matches. The floor resolves when
    // `ready\r\n` arrives. Each side then returns to an idle prompt untimed (the raw shell prints its
    // marker; the backend's `true` takes the prompt that followed the match as earlier output).
    const matches = await collectInterleaved(
      200,
      async () => {
        const elapsed = await timed(() => raw.run(READY, /ready\r\n/))
        await raw.next()
        return elapsed * 1000
      },
      async () => {
        const start = performance.now()
        const result = await stack.run(id, READY, { waitFor: LinePattern.compile('ready') })
        const elapsed = performance.now() - start
        if (result.waitReason !== 'output_match' || result.match?.line !== 'ready') {
          throw new Error(`bench: waitFor did not settle on the line: ${JSON.stringify(result)}`)
        }
        exact(await stack.run(id, 'true'), 'dsh> ', '`true` after a match', 'prompt')
        return elapsed * 1000
      },
      20,
    )
    rows.push({ figure: 'raw: `printf` → `ready` line arrives', unit: 'µs', samples: matches.floor })
    rows.push({
      figure: 'shell: `printf` with waitFor /ready/ (output_match)',
      unit: 'µs',
      floor: 'raw: `printf` → `ready` line arrives',
      note: `p50 over the floor ${extraMs(matches.contender, matches.floor)}: from the matching line's arrival to the settled send, plus the stack's per-send layers (see \`true\`) and one inspection telling the input`,
      samples: matches.contender,
    })

    // Python: the floor sets a marker in sys.ps1; the backend's unconfined shell marks the REPL's
    // prompt itself (PYTHONSTARTUP, with its own nonce), so a send at that prompt ends on the next marker.
    const ps1 = "import sys; sys.ps1 = '\\x1b]133;D;0\\x07dsh> '"
    await raw.run(`${PYTHON} -q -i -c "${ps1}"`)
    await stack.run(id, `${PYTHON} -q`)
    // Floor and backend alternate send by send, like the `true` rows.
    const pythonTrips = await roundTripPairs(
      200,
      () => raw.run('1+1'),
      async () => exact(await stack.run(id, '1+1'), '2\n>>> ', 'python `1+1`', 'program'),
    )
    rows.push({ figure: 'raw: python `1+1` (marker in sys.ps1)', unit: 'µs', samples: pythonTrips.floor })
    rows.push({
      figure: 'shell: python `1+1` (stdin_read)',
      unit: 'µs',
      floor: 'raw: python `1+1` (marker in sys.ps1)',
      note: 'floor and backend alternate send by send; both Pythons see the host environment (see RAW_ENV)',
      samples: pythonTrips.contender,
    })
    await raw.run('exit()')
    exact(await stack.run(id, 'exit()'), 'dsh> ', 'python `exit()`', 'prompt')

    // Python exit → the shell's prompt: each sample starts a fresh REPL (untimed), then times
    // `exit()` until the bash marker prompt is back. A send written at the marked REPL prompt is
    // answered by the next marker, the shell's. Without Python's marker (here `PYTHONSTARTUP=`) the
    // send falls back to the stdin-wait proof, and the shell's prompt after it may be one the shell
    // owed from before: it counts once it held still for pollIntervalMs. A confined session (bwrap)
    // gets the marker too: the sandbox shows the startup file, and the marker's pid is matched.
    const confinedId = await confined.open()
    const exitAfter =
      (start: string, on: Stack = stack, session = id) =>
      async () => {
        exact(await on.run(session, start), '>>> ', start, 'program')
        const begin = performance.now()
        const result = await on.run(session, 'exit()')
        const elapsed = performance.now() - begin
        exact(result, 'dsh> ', `\`exit()\` after ${start}`, 'prompt')
        return elapsed
      }
    const [exitFloor, exitMarked, exitUnmarked, exitConfined] = await collectRotating(
      20,
      [
        async () => {
          await raw.run(`${PYTHON} -q -i -c "${ps1}"`)
          return timed(() => raw.run('exit()'))
        },
        exitAfter(`${PYTHON} -q`),
        exitAfter(`PYTHONSTARTUP= ${PYTHON} -q`),
        exitAfter(`${PYTHON} -q`, confined, confinedId),
      ],
      2,
    )
    await confined.close(confinedId)
    const overFloor = (samples: readonly number[]) => `p50 over the floor ${(summarize(samples).p50 - summarize(exitFloor!).p50).toFixed(1)} ms`
    rows.push({ figure: 'raw: python `exit()` → marker prompt', unit: 'ms', samples: exitFloor! })
    rows.push({
      figure: 'shell: python `exit()` → prompt (stdin_read)',
      unit: 'ms',
      floor: 'raw: python `exit()` → marker prompt',
      note: `${overFloor(exitMarked!)}; the REPL's prompt marked (unconfined session); floor and both rows rotate per sample`,
      samples: exitMarked!,
    })
    rows.push({
      figure: 'shell: python `exit()` → prompt, REPL unmarked',
      unit: 'ms',
      floor: 'raw: python `exit()` → marker prompt',
      note: `${overFloor(exitUnmarked!)}; \`PYTHONSTARTUP= python3 -q\`: the shell's prompt holds still for pollIntervalMs`,
      samples: exitUnmarked!,
    })
    rows.push({
      figure: 'shell: python `exit()` → prompt, confined session (workspace-write)',
      unit: 'ms',
      floor: 'raw: python `exit()` → marker prompt',
      note: `${overFloor(exitConfined!)}; bubblewrap shows the marking startup file, the marker's pid is matched through NSpid`,
      samples: exitConfined!,
    })

    // Peak RSS of this process while a flood drains, sampled every 10 ms: the floor's and ours run in
    // the same process, so the ratio compares what each adds on top of the same baseline.
    const peakRss = async <T>(run: () => Promise<T>): Promise<{ value: T; peak: number }> => {
      let peak = process.memoryUsage().rss
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10)
      try {
        return { value: await run(), peak: Math.max(peak, process.memoryUsage().rss) }
      } finally {
        clearInterval(sampler)
      }
    }
    const floodRss = { raw: [] as number[], shell: [] as number[] }
    let peakGrowth = 0
    let floods = 0
    const rawFlood: number[] = []
    const shellFlood: number[] = []
    // Floor and backend alternate flood by flood, so a slow phase of the machine hits both.
    for (let round = 0; round < 4; round++) {
      const measured = round > 0
      const rawRun = await peakRss(() => timed(() => raw.run(FLOOD)))
      const base = process.memoryUsage().rss
      const shellRun = await peakRss(() => timed(async () => exact(await stack.run(id, FLOOD), 'dsh> ', 'the flood')))
      // The warm-up flood grows V8's heap once; the measured ones show whether memory stays bounded.
      if (floods++ > 0) peakGrowth = Math.max(peakGrowth, shellRun.peak - base)
      if (!measured) continue
      rawFlood.push(FLOOD_BYTES / 1_048_576 / (rawRun.value / 1000))
      shellFlood.push(FLOOD_BYTES / 1_048_576 / (shellRun.value / 1000))
      floodRss.raw.push(rawRun.peak / 1_048_576)
      floodRss.shell.push(shellRun.peak / 1_048_576)
    }
    rows.push({ figure: 'raw: 27 MB flood', unit: 'MiB/s', higherIsBetter: true, samples: rawFlood })
    rows.push({
      figure: 'shell: 27 MB flood',
      unit: 'MiB/s',
      higherIsBetter: true,
      floor: 'raw: 27 MB flood',
      note: `peak RSS growth per flood after the warm-up one ${(peakGrowth / 1_048_576).toFixed(1)} MiB (scrollbackMaxBytes 4 MiB, result capped at 256 KiB); floor and shell alternate per flood`,
      samples: shellFlood,
    })
    rows.push({ figure: 'raw: 27 MB flood, peak RSS of the process', unit: 'MiB', samples: floodRss.raw })
    rows.push({
      figure: 'shell: 27 MB flood, peak RSS of the process',
      unit: 'MiB',
      floor: 'raw: 27 MB flood, peak RSS of the process',
      note: 'the whole bench process (both stacks loaded) sampled every 10 ms while each flood drains',
      samples: floodRss.shell,
    })
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
      note: `disposeGraceMs ${BACKEND_CONFIG.disposeGraceMs}`,
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
    await confined.dispose()
    await stack.dispose()
  }
  return rows
}
