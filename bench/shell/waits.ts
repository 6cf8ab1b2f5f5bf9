// A fresh input-state look while a program runs in front (busy), and `waitFor`: the delay from a
// matching line's arrival to the settled send.
import { readFileSync } from 'node:fs'
import { eventually } from 'dsh-testkit'
import { LinePattern } from '../../packages/basics/src/index'
import { collectInterleaved, timed } from '../lib/measure'
import { RawShell } from '../lib/raw-shell'
import { exact } from '../lib/shell-stack'
import { summarize } from '../lib/stats'
import type { BenchRow } from '../lib/types'
import { whenWanted } from './group'

const BUSY_FLOOR = 'raw: /proc stat of shell + stat, syscall of the one in front'
const BUSY = 'shell: inputState(), `sleep 600` in front (busy)'
const MATCH_FLOOR = 'raw: `printf` → `ready` line arrives'
const MATCH = 'shell: `printf` with waitFor /ready/ (output_match)'
/** Prints `ready` without the command line's echo containing it. */
const READY = "printf 'r%s\\n' eady"

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
function roundTripPairs(count: number, floor: () => Promise<unknown>, contender: () => Promise<unknown>) {
  const micros = (run: () => Promise<unknown>) => async () => (await timed(run)) * 1000
  return collectInterleaved(count, micros(floor), micros(contender), 20)
}

/** The busy look and `waitFor`, on one raw shell and one unconfined session. */
export const waitRows = whenWanted([BUSY_FLOOR, BUSY, MATCH_FLOOR, MATCH], async ({ stack }): Promise<BenchRow[]> => {
  const raw = await RawShell.open()
  const id = await stack.open()
  try {
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
    const extra = ((summarize(matches.contender).p50 - summarize(matches.floor).p50) / 1000).toFixed(2)
    return [
      { figure: BUSY_FLOOR, unit: 'µs', samples: busyLooks.floor },
      {
        figure: BUSY,
        unit: 'µs',
        floor: BUSY_FLOOR,
        note: 'one foreground inspection (no terminal flags: sleep is proven not to read); the floor is the three synchronous reads that name the process in front and its syscall, with no proof of what it waits on',
        samples: busyLooks.contender,
      },
      { figure: MATCH_FLOOR, unit: 'µs', samples: matches.floor },
      {
        figure: MATCH,
        unit: 'µs',
        floor: MATCH_FLOOR,
        note: `p50 over the floor ${extra} ms: from the matching line's arrival to the settled send, plus the stack's per-send layers (see \`true\`) and one inspection telling the input`,
        samples: matches.contender,
      },
    ]
  } finally {
    await raw.close()
    await stack.close(id)
  }
})
