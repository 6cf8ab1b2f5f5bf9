// The 27 MB flood: throughput with the floor and both stacks in this process, taking turns; then
// CPU time and peak RSS per flood with each side in a process of its own, where they can be told apart.
import { runChild } from '../lib/child'
import { collectRotating, timed } from '../lib/measure'
import { RawShell } from '../lib/raw-shell'
import { exact, type Stack } from '../lib/shell-stack'
import type { TerminalSessionId } from '../../packages/terminal/terminal/src/index'
import type { BenchRow } from '../lib/types'
import { FLOOD, FLOOD_BYTES } from '../lib/workloads'
import { whenWanted } from './group'

const RATE_FLOOR = 'raw: 27 MB flood'
const RATE = 'shell: 27 MB flood'
const RATE_CONFINED = 'shell: 27 MB flood, confined (workspace-write)'
const CPU_FLOOR = 'raw: 27 MB flood, CPU time (own process)'
const CPU = 'shell: 27 MB flood, CPU time (own process)'
const CPU_CONFINED = 'shell: 27 MB flood, CPU time, confined (own process)'
const RSS_FLOOR = 'raw: 27 MB flood, peak RSS (own process)'
const RSS = 'shell: 27 MB flood, peak RSS (own process)'
const RSS_CONFINED = 'shell: 27 MB flood, peak RSS, confined (own process)'
/** Child processes per side, and floods per child after its unmeasured first one. */
const CHILD_ROUNDS = 2
const FLOODS_PER_CHILD = 2

/** MiB/s of one flood drained in `ms`. */
const rate = (ms: number) => FLOOD_BYTES / 1_048_576 / (ms / 1000)

/** Throughput, floor and both stacks in this process, one flood each per round (the first round unmeasured). */
export const floodRateRows = whenWanted([RATE_FLOOR, RATE, RATE_CONFINED], async ({ stack, confined }): Promise<BenchRow[]> => {
  const raw = await RawShell.open()
  const id = await stack.open()
  const confinedId = await confined.open()
  const drain = (on: Stack, session: TerminalSessionId) => async () => rate(await timed(async () => exact(await on.run(session, FLOOD), 'dsh> ', 'the flood')))
  try {
    const [floor, ours, theirs] = await collectRotating(
      // Throughput swings with the scheduling of producer and reader on a small VM: seven floods each.
      7,
      [async () => rate(await timed(() => raw.run(FLOOD))), drain(stack, id), drain(confined, confinedId)],
      1,
    )
    const note = 'the floor and both stacks take turns flood by flood (scrollbackMaxBytes 4 MiB, result capped at 256 KiB)'
    return [
      { figure: RATE_FLOOR, unit: 'MiB/s', higherIsBetter: true, samples: floor! },
      { figure: RATE, unit: 'MiB/s', higherIsBetter: true, floor: RATE_FLOOR, note, samples: ours! },
      { figure: RATE_CONFINED, unit: 'MiB/s', higherIsBetter: true, floor: RATE_FLOOR, samples: theirs! },
    ]
  } finally {
    await raw.close()
    await stack.close(id)
    await confined.close(confinedId)
  }
})

interface FloodChild {
  floods: { ms: number; cpuMs: number; peakMiB: number; baseMiB: number }[]
}

/** CPU time and peak RSS per flood, each side in a child process of its own (bench/children/flood.ts), the sides taking turns. */
export const floodCostRows = whenWanted([CPU_FLOOR, CPU, CPU_CONFINED, RSS_FLOOR, RSS, RSS_CONFINED], async (): Promise<BenchRow[]> => {
  const sides = ['raw', 'shell', 'confined'] as const
  const floods = { raw: [] as FloodChild['floods'], shell: [] as FloodChild['floods'], confined: [] as FloodChild['floods'] }
  for (let round = 0; round < CHILD_ROUNDS; round++) {
    for (const side of sides) floods[side].push(...(await runChild<FloodChild>('flood', [side, String(FLOODS_PER_CHILD + 1)])).floods)
  }
  const cpu = (side: (typeof sides)[number]) => floods[side].map((flood) => flood.cpuMs)
  const peak = (side: (typeof sides)[number]) => floods[side].map((flood) => flood.peakMiB)
  const base = (side: (typeof sides)[number]) => Math.max(...floods[side].map((flood) => flood.baseMiB)).toFixed(0)
  return [
    { figure: CPU_FLOOR, unit: 'ms', samples: cpu('raw') },
    {
      figure: CPU,
      unit: 'ms',
      floor: CPU_FLOOR,
      note: `process.cpuUsage of a child process that holds only this side, around each flood (${CHILD_ROUNDS} children per side, ${FLOODS_PER_CHILD} floods each after an unmeasured one); bash, head and base64 are not counted`,
      samples: cpu('shell'),
    },
    { figure: CPU_CONFINED, unit: 'ms', floor: CPU_FLOOR, samples: cpu('confined') },
    { figure: RSS_FLOOR, unit: 'MiB', note: `the child's RSS before a flood (after a full GC): up to ${base('raw')} MiB`, samples: peak('raw') },
    {
      figure: RSS,
      unit: 'MiB',
      floor: RSS_FLOOR,
      note: `VmHWM of the child, reset before each flood (clear_refs); RSS before a flood up to ${base('shell')} MiB`,
      samples: peak('shell'),
    },
    { figure: RSS_CONFINED, unit: 'MiB', floor: RSS_FLOOR, note: `RSS before a flood up to ${base('confined')} MiB`, samples: peak('confined') },
  ]
})
