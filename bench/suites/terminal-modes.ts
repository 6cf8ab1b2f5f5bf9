// The terminal's echo/canonical flags (`inspectForeground({ terminalModes: true })`): what reading
// them adds to a plain inspection, through the perl termios helper (the default) and through the
// stty helper shell (its fallback), all on the same provider shell in the same run.
import { readlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { Context } from '@deepseek-ai/cordis'
import { eventually } from 'dsh-testkit'
import type { SubprocessTerminalHandle } from '../../packages/subprocess/subprocess/src/index'
import { Config } from '../../packages/subprocess/subprocess-local/src/index'
import * as local from '../../packages/subprocess/subprocess-local/src/internal'
import { summarize } from '../lib/stats'
import type { BenchRow } from '../lib/types'

const PROMPT = 'M$ '
const BASH = ['bash', '--noprofile', '--norc', '-i']
const WARMUP = 20
const READS = 300
const INSPECTIONS = 300

type Contender = () => Promise<unknown>

/**
 * Time each contender `count` times after a warm-up, one sample of each per round, the order
 * rotated every round so load drift and going first hit all alike (one contender: a plain loop). Samples in µs, plus each
 * contender's host CPU per call (all threads).
 */
async function rotated(count: number, contenders: readonly Contender[]): Promise<Array<{ samples: number[]; cpuUs: number }>> {
  for (let i = 0; i < WARMUP; i++) for (const run of contenders) await run()
  const results = contenders.map(() => ({ samples: [] as number[], cpu: 0 }))
  for (let round = 0; round < count; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const index = (round + k) % contenders.length
      const cpuBefore = process.cpuUsage()
      const start = performance.now()
      await contenders[index]!()
      const elapsed = (performance.now() - start) * 1000
      const cpu = process.cpuUsage(cpuBefore)
      results[index]!.samples.push(elapsed)
      results[index]!.cpu += cpu.user + cpu.system
    }
  }
  return results.map(({ samples, cpu }) => ({ samples, cpuUs: Math.round(cpu / count) }))
}

/** `p50(samples) − p50(floor)` in ms, for the notes. */
function extraMs(samples: readonly number[], floor: readonly number[]): string {
  return `${((summarize(samples).p50 - summarize(floor).p50) / 1000).toFixed(3)} ms`
}

/** The flags through each helper alone, and an inspection with them next to the plain one. */
export async function terminalModes(): Promise<BenchRow[]> {
  const perl = new local.TermiosModes()
  const stty = new local.SttyModes()
  // The runtime reads through whichever source the current contender selects.
  let current: local.TerminalModesSource = perl
  const switching: local.TerminalModesSource = { read: (device, terminal) => current.read(device, terminal), dispose() {} }
  const root = new Context()
  const fiber = await root.plugin({
    name: 'bench-terminal-modes',
    apply: (ctx: Context) => void new local.LocalSubprocessRuntime(ctx, Config.parse({}), { modes: switching }),
  })
  let handle: SubprocessTerminalHandle | undefined
  try {
    handle = await root.subprocess.spawnTerminal({
      argv: BASH,
      env: { PS1: PROMPT, TERM: 'dumb', HISTFILE: '/dev/null' },
      cwd: tmpdir(),
      rows: 40,
      cols: 120,
      graceMs: 3000,
    })
    let text = ''
    handle.onOutput((chunk) => {
      text += chunk.toString()
    })
    await eventually(() => text.endsWith(PROMPT), 'provider prompt')
    const shell = handle
    const device = readlinkSync(`/proc/${shell.pid}/fd/0`)

    const readThrough = (source: local.TerminalModesSource) => async () => {
      if (!(await source.read(device, undefined))) throw new Error('bench: the helper read no modes')
    }
    // One helper at a time: an stty read leaves its process exiting and being reaped, and on a small
    // machine that spills into whatever is measured next.
    const [perlRead] = await rotated(READS, [readThrough(perl)])
    const [sttyRead] = await rotated(READS, [readThrough(stty)])
    if (perl.via !== 'perl') throw new Error(`bench: the flags went through ${perl.via}, not perl`)

    const inspectWith = (source: local.TerminalModesSource) => async () => {
      current = source
      if (!(await shell.inspectForeground({ terminalModes: true }))?.terminalModes) throw new Error('bench: no terminal modes')
    }
    const inspectPlain = () => shell.inspectForeground()
    const [plainPerl, viaPerl] = await rotated(INSPECTIONS, [inspectPlain, inspectWith(perl)])
    const [plainStty, viaStty] = await rotated(INSPECTIONS, [inspectPlain, inspectWith(stty)])
    if (perl.via !== 'perl') throw new Error(`bench: the flags went through ${perl.via}, not perl`)

    return [
      {
        figure: 'modes read: stty helper shell (stty -g -F per read)',
        unit: 'µs',
        samples: sttyRead!.samples,
        note: `${sttyRead!.cpuUs} µs of host CPU per read; a fork and exec of stty in the helper each time`,
      },
      {
        figure: 'modes read: perl helper (tcgetattr in-process)',
        unit: 'µs',
        floor: 'modes read: stty helper shell (stty -g -F per read)',
        samples: perlRead!.samples,
        note: `${perlRead!.cpuUs} µs of host CPU per read; one pipe round trip, open + tcgetattr + close in perl`,
      },
      {
        figure: 'inspectForeground: idle bash (alternating with the next)',
        unit: 'µs',
        samples: plainPerl!.samples,
        note: `${plainPerl!.cpuUs} µs of host CPU per inspection`,
      },
      {
        figure: 'inspectForeground({ terminalModes: true }): perl helper',
        unit: 'µs',
        floor: 'inspectForeground: idle bash (alternating with the next)',
        samples: viaPerl!.samples,
        note: `+${extraMs(viaPerl!.samples, plainPerl!.samples)} at p50 over the plain inspection; ${viaPerl!.cpuUs} µs of host CPU`,
      },
      {
        figure: 'inspectForeground: idle bash (alternating with the stty row)',
        unit: 'µs',
        samples: plainStty!.samples,
        note: `${plainStty!.cpuUs} µs of host CPU per inspection`,
      },
      {
        figure: 'inspectForeground({ terminalModes: true }): stty helper',
        unit: 'µs',
        floor: 'inspectForeground: idle bash (alternating with the stty row)',
        samples: viaStty!.samples,
        note: `+${extraMs(viaStty!.samples, plainStty!.samples)} at p50 over the plain inspection; ${viaStty!.cpuUs} µs of host CPU`,
      },
    ]
  } finally {
    await handle?.terminate()
    await fiber.dispose()
    perl.dispose()
    stty.dispose()
  }
}
