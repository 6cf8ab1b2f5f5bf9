/** Summary statistics of one row's samples. */
export interface Summary {
  readonly n: number
  readonly p50: number
  readonly p95: number
  readonly min: number
  readonly max: number
  readonly mean: number
}

/** Nearest-rank percentile (0–100) of unsorted samples; NaN for none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN
  const sorted = [...samples].sort((a, b) => a - b)
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!
}

/** n, p50, p95, min, max and mean of the samples. */
export function summarize(samples: readonly number[]): Summary {
  const n = samples.length
  return {
    n,
    p50: percentile(samples, 50),
    p95: percentile(samples, 95),
    min: n ? Math.min(...samples) : Number.NaN,
    max: n ? Math.max(...samples) : Number.NaN,
    mean: n ? samples.reduce((sum, value) => sum + value, 0) / n : Number.NaN,
  }
}
