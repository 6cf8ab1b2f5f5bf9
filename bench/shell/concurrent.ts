// 50 sessions at once, each opened, sent one `echo` and closed, unconfined and confined, beside 50
// raw shells doing the same. Heavy and sensitive to drift: the three take turns per sample.
import { collectRotating, timed } from '../lib/measure'
import { RawShell } from '../lib/raw-shell'
import { exact, type Stack } from '../lib/shell-stack'
import type { BenchRow } from '../lib/types'
import { whenWanted } from './group'

const SESSIONS = 50
const FLOOR = 'raw: 50 × (open + echo + close), concurrent'
const OURS = 'shell: 50 × (open + echo + close), concurrent'
const CONFINED = 'shell: 50 × (open + echo + close), concurrent, confined (workspace-write)'

/** One sample: `SESSIONS` sessions of `stack` at once, every echo checked exactly. */
function sessionsOf(stack: Stack) {
  return () =>
    timed(() =>
      Promise.all(
        Array.from({ length: SESSIONS }, async (_, index) => {
          const session = await stack.open()
          exact(await stack.run(session, `echo token-${index}`), `token-${index}\n`, `session ${index}`)
          await stack.close(session)
        }),
      ),
    )
}

/** The 50-session rows. */
export const concurrentRows = whenWanted([FLOOR, OURS, CONFINED], async ({ stack, confined }): Promise<BenchRow[]> => {
  const [floor, ours, theirs] = await collectRotating(5, [
    () =>
      timed(() =>
        Promise.all(
          Array.from({ length: SESSIONS }, async (_, index) => {
            const shell = await RawShell.open()
            await shell.run(`echo token-${index}`)
            await shell.close()
          }),
        ),
      ),
    sessionsOf(stack),
    sessionsOf(confined),
  ])
  return [
    { figure: FLOOR, unit: 'ms', samples: floor! },
    {
      figure: OURS,
      unit: 'ms',
      floor: FLOOR,
      note: 'every echo must settle as stdin_read with its own output, or the bench fails; floor and both stacks take turns per sample',
      samples: ours!,
    },
    { figure: CONFINED, unit: 'ms', floor: FLOOR, note: 'bash inside bubblewrap, a git workspace; the raw floor is unconfined', samples: theirs! },
  ]
})
