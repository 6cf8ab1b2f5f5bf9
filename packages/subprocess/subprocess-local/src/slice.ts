import { setImmediate as nextMacrotask } from 'node:timers/promises'

/**
 * A synchronous scan written as a generator: it yields between units of work (one process) so
 * the same code can run to completion synchronously (host exit) or in slices that let the event
 * loop deliver PTY output in between (everything else).
 */
export type Scan<T> = Generator<void, T, void>

/** Longest synchronous stretch of /proc work before yielding to the event loop. */
export const SLICE_BUDGET_MS = 1

/** Run a scan to completion without yielding. */
export function runSync<T>(scan: Scan<T>): T {
  for (;;) {
    const step = scan.next()
    if (step.done) return step.value
  }
}

/** Run a scan, yielding a macrotask whenever a slice exceeded `budgetMs`. */
export async function runSliced<T>(scan: Scan<T>, budgetMs = SLICE_BUDGET_MS): Promise<T> {
  let sliceStart = performance.now()
  for (;;) {
    const step = scan.next()
    if (step.done) return step.value
    if (performance.now() - sliceStart >= budgetMs) {
      await nextMacrotask()
      sliceStart = performance.now()
    }
  }
}
