// Close rows: an idle session, and a 20-process tree with one TERM-ignorer, beside raw floors that
// know what to kill and verify nothing.
import { children } from 'dsh-testkit'
import { collect, timed } from '../lib/measure'
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

/** Closing an idle session and a 20-process tree. */
export const closeRows = whenWanted([IDLE_FLOOR, IDLE, TREE_FLOOR, TREE_ROW], async ({ stack }): Promise<BenchRow[]> => {
  const rows: BenchRow[] = []
  rows.push({
    figure: IDLE_FLOOR,
    unit: 'ms',
    samples: await collect(15, async () => {
      const shell = await RawShell.open()
      return timed(() => shell.close())
    }),
  })
  rows.push({
    figure: IDLE,
    unit: 'ms',
    floor: IDLE_FLOOR,
    note: 'verified quiescent (the session cgroup is empty after the shell exits; without cgroups the provider sweeps the tree)',
    samples: await collect(15, async () => {
      const session = await stack.open()
      return timed(() => stack.close(session))
    }),
  })
  rows.push({
    figure: TREE_FLOOR,
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
    figure: TREE_ROW,
    unit: 'ms',
    floor: TREE_FLOOR,
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
  return rows
})
