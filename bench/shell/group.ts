// A group of shell rows: the figures it measures and how, skipped whole when `--only` matches none.
import { wants } from '../lib/row-filter'
import type { Stack } from '../lib/shell-stack'
import type { BenchRow } from '../lib/types'

/** The two stacks every shell group may use: unconfined (like the floor) and confined (the default composition's sandbox). */
export interface ShellStacks {
  readonly stack: Stack
  readonly confined: Stack
}

/** A group of rows measured together (they share floors or sessions). */
export type ShellGroup = (stacks: ShellStacks) => Promise<BenchRow[]>

/** `measure`, run only when `--only` is unset or matches one of `figures` (the group's rows, floors included). */
export function whenWanted(figures: readonly string[], measure: ShellGroup): ShellGroup {
  return (stacks) => (wants(...figures) ? measure(stacks) : Promise.resolve([]))
}
