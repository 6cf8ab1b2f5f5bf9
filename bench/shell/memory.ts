// Host memory per idle session: 100 sessions opened in a process of their own (bench/children/
// idle-sessions.ts), the RSS growth per session after a full GC, beside 100 raw node-pty bashes.
import { runChild } from '../lib/child'
import type { BenchRow } from '../lib/types'
import { whenWanted } from './group'

const SESSIONS = 100
/** Child processes per side (each opens {@link SESSIONS} sessions); the sides take turns. */
const ROUNDS = 2
const FLOOR = 'raw: host RSS per idle bash (100 open, own process)'
const OURS = 'shell: host RSS per idle session (100 open, own process)'

interface IdleChild {
  rssPerSession: number
  heapPerSession: number
}

/** RSS growth per idle session, ours and the raw floor's. */
export const memoryRows = whenWanted([FLOOR, OURS], async (): Promise<BenchRow[]> => {
  const sides = { raw: [] as IdleChild[], shell: [] as IdleChild[] }
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of ['raw', 'shell'] as const) sides[side].push(await runChild<IdleChild>('idle-sessions', [side, String(SESSIONS)]))
  }
  const mib = (children: IdleChild[], key: keyof IdleChild) => children.map((child) => child[key] / 1_048_576)
  const heap = (children: IdleChild[]) =>
    `JS heap ${mib(children, 'heapPerSession')
      .map((value) => value.toFixed(2))
      .join(', ')} MiB per session`
  return [
    { figure: FLOOR, unit: 'MiB', note: heap(sides.raw), samples: mib(sides.raw, 'rssPerSession') },
    {
      // No ratio: a raw bash costs the host next to nothing (its memory is the bash's), so the target is absolute.
      figure: OURS,
      unit: 'MiB',
      note: `target ≤ 1 MiB per session (absolute: the raw row above is the floor's own growth, near 0); ${heap(sides.shell)}; RSS after a full GC, before and after opening ${SESSIONS} more sessions one after the other (${ROUNDS} child processes per side)`,
      samples: mib(sides.shell, 'rssPerSession'),
    },
  ]
})
