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
