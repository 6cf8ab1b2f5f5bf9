import type { SendHost } from './send-contract'
import { after, type Cancel } from './timers'

/** How long a cancel waits for any effect of its SIGINT before delivering it once more. */
const REPEAT_SIGINT_MS = 100

/**
 * A SIGINT that lands between bash's fork and the program's exec is consumed by the handler the
 * child still has from bash, and the program then runs on. If, a moment later (100 ms, at most half
 * of `cancelGraceMs`), nothing arrived, the send is still `pending()` and the same group `target` is
 * still in front, deliver it once more — as a user presses Ctrl-C twice. `settled` ends the wait early.
 */
export async function repeatIfSwallowed(
  host: SendHost,
  target: number,
  options: { cancelGraceMs: number; settled: Promise<unknown>; pending: () => boolean },
): Promise<void> {
  const arrivals = host.stream.arrivals
  let stop: Cancel | undefined
  const delay = Math.min(REPEAT_SIGINT_MS, Math.floor(options.cancelGraceMs / 2))
  const settled = options.settled.then(
    () => undefined,
    () => undefined,
  )
  await Promise.race([settled, new Promise<void>((resolve) => (stop = after(delay, resolve)))])
  stop?.()
  const untouched = () => options.pending() && host.stream.arrivals === arrivals && !host.exited() && !host.closing()
  if (!untouched()) return
  const facts = await host.inspectForeground()
  if (!untouched() || !facts || facts.isShellGroup || facts.processGroupId !== target) return
  await host.signalForeground('SIGINT').catch(() => undefined)
}
