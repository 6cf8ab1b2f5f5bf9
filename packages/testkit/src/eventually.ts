/**
 * What {@link eventually} polls: an answer other than `undefined` or `false` ends the wait and is
 * returned (so `0`, `''` and `null` are answers); it may be async.
 */
export type Probe<T> = () => T | undefined | false | Promise<T | undefined | false>

/**
 * Poll `probe` (after 2 ms, doubling up to 50 ms) until it answers, and return the answer; throws
 * `timed out waiting for <what>` after `timeoutMs`. Tests and benches wait for a condition, never a fixed sleep.
 */
export async function eventually<T>(probe: Probe<T>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = performance.now() + timeoutMs
  let delay = 2
  for (;;) {
    const value = await probe()
    if (value !== undefined && value !== false) return value
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, delay))
    delay = Math.min(delay * 2, 50)
  }
}
