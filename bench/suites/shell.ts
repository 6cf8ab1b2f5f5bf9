// The shell backend (dsh-terminal-bash through ctx.terminals and the node-pty provider) against a raw
// node-pty floor: a bash whose PROMPT_COMMAND prints the same OSC 133;D marker, read event-driven.
// Each group of rows lives in bench/shell/ and runs only when `--only` matches one of its figures.
import { mount, type Stack } from '../lib/shell-stack'
import type { BenchRow } from '../lib/types'
import { closeRows } from '../shell/close'
import { concurrentRows } from '../shell/concurrent'
import { floodCostRows, floodRateRows } from '../shell/flood'
import type { ShellGroup } from '../shell/group'
import { memoryRows } from '../shell/memory'
import { openRows } from '../shell/opens'
import { pythonRows } from '../shell/python'
import { coldRows, cpuRows, roundTripRows } from '../shell/round-trips'
import { waitRows } from '../shell/waits'

/** The groups in the order they run and print. */
const GROUPS: readonly ShellGroup[] = [
  openRows,
  roundTripRows,
  cpuRows,
  coldRows,
  waitRows,
  pythonRows,
  floodRateRows,
  floodCostRows,
  closeRows,
  concurrentRows,
  memoryRows,
]

/** Open, round trips, CPU, REPL, flood, close, 50 concurrent sessions and memory, each next to the raw floor. */
export async function shell(): Promise<BenchRow[]> {
  const rows: BenchRow[] = []
  const stack: Stack = await mount()
  // The default composition's sandbox: bubblewrap, a git workspace.
  const confined: Stack = await mount('workspace-write')
  try {
    for (const group of GROUPS) {
      try {
        rows.push(...(await group({ stack, confined })))
      } catch (error) {
        // One group's failure fails the run (exit 1) but does not cost the other groups' rows.
        process.exitCode = 1
        console.error(`## shell: a group of rows failed\n\n${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
      }
    }
  } finally {
    await confined.dispose()
    await stack.dispose()
  }
  return rows
}
