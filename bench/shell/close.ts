// Close rows: an idle session, and a 20-process tree with one TERM-ignorer, beside raw floors that
// know what to kill and verify nothing. The idle session has finished its open (one `true` send, on
// both sides): right after an open the host still runs its background work (the look that pins the
// shell's group, the warm launcher's refill), which is the open's cost, not the close's.
import { children } from 'dsh-testkit'
import { collectInterleaved, STEADY_WARMUP_SESSIONS, timed } from '../lib/measure'
import { treeReady } from '../lib/process-tree'
import { RawShell } from '../lib/raw-shell'
import { BACKEND_CONFIG } from '../lib/shell-stack'
import type { BenchRow } from '../lib/types'
import { whenWanted } from './group'

const TREE = `for i in $(seq 19); do sleep 700 & done; sh -c 'trap "" TERM; exec sleep 700' &`
const IDLE_FLOOR = 'raw: SIGHUP idle bash → exit'
const IDLE = 'shell: close idle session'
const TREE_FLOOR = 'raw: SIGKILL 20 known pids + SIGHUP'
const TREE_ROW = 'shell: close 20-process tree, 1 TERM-ignorer'

/** Closing an idle session and a 20-process tree, each beside its floor, the two taking turns. */
export const closeRows = whenWanted([IDLE_FLOOR, IDLE, TREE_FLOOR, TREE_ROW], async ({ stack }): Promise<BenchRow[]> => {
  const idle = await collectInterleaved(
    20,
    async () => {
      const shell = await RawShell.open()
      await shell.run('true')
      return timed(() => shell.close())
    },
    async () => {
      const session = await stack.open()
      await stack.run(session, 'true')
      return timed(() => stack.close(session))
    },
    STEADY_WARMUP_SESSIONS,
  )
  const tree = await collectInterleaved(
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
    async () => {
      const session = await stack.open()
      await stack.run(session, TREE)
      const pid = Number((await stack.run(session, 'echo "pid=$$"')).viewport.match(/pid=(\d+)/)?.[1])
      const kids = await treeReady(pid)
      const elapsed = await timed(() => stack.close(session))
      if (kids.some((kid) => children(pid).includes(kid))) throw new Error('bench: tree survived')
      return elapsed
    },
    2,
  )
  const warmed = `after ${STEADY_WARMUP_SESSIONS} sessions of each side; the floor and the stack take turns`
  return [
    { figure: IDLE_FLOOR, unit: 'ms', samples: idle.floor },
    {
      figure: IDLE,
      unit: 'ms',
      floor: IDLE_FLOOR,
      note: `verified quiescent (the session cgroup is empty after the shell exits; without cgroups the provider sweeps the tree); ${warmed}`,
      samples: idle.contender,
    },
    { figure: TREE_FLOOR, unit: 'ms', samples: tree.floor },
    {
      figure: TREE_ROW,
      unit: 'ms',
      floor: TREE_FLOOR,
      note: `disposeGraceMs ${BACKEND_CONFIG.disposeGraceMs}; the floor and the stack take turns`,
      samples: tree.contender,
    },
  ]
})
