// Open rows: the stack's open (unconfined and confined) to the first prompt, beside the raw floor's.
import { collectInterleaved, STEADY_WARMUP_SESSIONS } from '../lib/measure'
import { RawShell } from '../lib/raw-shell'
import type { Stack } from '../lib/shell-stack'
import { summarize } from '../lib/stats'
import type { BenchRow } from '../lib/types'
import { type ShellStacks, whenWanted } from './group'

const FLOOR = 'raw: open bash → marker prompt'
const OPEN = 'shell: terminals.spawn (open)'
const CONFINED = 'shell: open, confined (workspace-write, a git workspace)'

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
    STEADY_WARMUP_SESSIONS,
  )
}

/** Open, unconfined and confined, each beside the raw floor. */
export const openRows = whenWanted([FLOOR, OPEN, CONFINED], async ({ stack, confined }: ShellStacks): Promise<BenchRow[]> => {
  const opens = await opensBeside(stack)
  const confinedOpens = await opensBeside(confined)
  return [
    { figure: FLOOR, unit: 'ms', samples: opens.floor },
    { figure: OPEN, unit: 'ms', floor: FLOOR, note: `after ${STEADY_WARMUP_SESSIONS} opens of each side`, samples: opens.contender },
    {
      figure: CONFINED,
      unit: 'ms',
      floor: FLOOR,
      samples: confinedOpens.contender,
      note: `bubblewrap, its seccomp filter and the mount check (the workspace's .git is protected); the raw floor of this pair, unconfined: ${summarize(confinedOpens.floor).p50.toFixed(1)} ms`,
    },
  ]
})
