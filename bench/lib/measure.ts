/** Milliseconds elapsed while `run` executes (monotonic clock). */
export async function timed(run: () => unknown): Promise<number> {
  const start = performance.now()
  await run()
  return performance.now() - start
}

/** Run `iteration` `warmup` times unmeasured, then collect one sample per run (what it returns). */
export async function collect(count: number, iteration: () => Promise<number>, warmup = 2): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await iteration()
  const samples: number[] = []
  for (let i = 0; i < count; i++) samples.push(await iteration())
  return samples
}

/**
 * Like {@link collect} for two contenders at once, alternating them sample by sample and swapping
 * which goes first every round (floor, contender, contender, floor, …), so drift in the host's load
 * or our own heap, and any cost of going second, hit both alike.
 */
export async function collectInterleaved(
  count: number,
  floor: () => Promise<number>,
  contender: () => Promise<number>,
  warmup = 1,
): Promise<{ floor: number[]; contender: number[] }> {
  for (let i = 0; i < warmup; i++) {
    await floor()
    await contender()
  }
  const samples = { floor: [] as number[], contender: [] as number[] }
  for (let i = 0; i < count; i++) {
    if (i % 2 === 0) {
      samples.floor.push(await floor())
      samples.contender.push(await contender())
    } else {
      samples.contender.push(await contender())
      samples.floor.push(await floor())
    }
  }
  return samples
}

/**
 * Like {@link collectInterleaved} for any number of contenders: one sample of each per round, the
 * order rotated every round so none always goes first, after `warmup` unmeasured rounds.
 */
export async function collectRotating(count: number, contenders: readonly (() => Promise<number>)[], warmup = 1): Promise<number[][]> {
  for (let i = 0; i < warmup; i++) for (const run of contenders) await run()
  const samples = contenders.map(() => [] as number[])
  for (let i = 0; i < count; i++) {
    for (let k = 0; k < contenders.length; k++) {
      const index = (i + k) % contenders.length
      samples[index]!.push(await contenders[index]!())
    }
  }
  return samples
}

/**
 * Sends every contender of a per-send row makes before its samples count: V8 optimizes a path after
 * thousands of calls, so with a short warm-up such rows measure the JIT's tiers, not the code (the
 * same build's `true` round trip is 1.9× the floor after 20 sends and 1.2–1.4× after 1500). A host is
 * long-lived, so these rows are its steady state; the shell suite's cold rows show the first sends of
 * a fresh process.
 */
export const STEADY_WARMUP_SENDS = 1500

/**
 * Sessions (each opened and closed) every contender of an open or close row makes before its
 * samples count, for the same reason: an open or a close runs a lot of code once per session, so
 * the first ones measure the JIT's tiers (the same build's open is 1.9× the floor after 2 opens,
 * about 1.5× after 15).
 */
export const STEADY_WARMUP_SESSIONS = 15

/** Microseconds of this process's CPU time (user + system) spent while `run` executes. */
export async function cpuMicros(run: () => unknown): Promise<number> {
  const start = process.cpuUsage()
  await run()
  const used = process.cpuUsage(start)
  return used.user + used.system
}

/** One sample of {@link cpuMicros} per call over `count` sequential calls of `run`, divided by `count`. */
export function cpuPerCall(count: number, run: () => Promise<unknown>): () => Promise<number> {
  return async () =>
    (await cpuMicros(async () => {
      for (let i = 0; i < count; i++) await run()
    })) / count
}
