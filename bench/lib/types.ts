/** One measured figure of a suite. Samples are in `unit`; lower is better unless `higherIsBetter`. */
export interface BenchRow {
  /** What was measured, e.g. "close an idle session". */
  readonly figure: string
  /** Unit of every sample. */
  readonly unit: 'ms' | 'µs' | 'MiB/s' | 'MiB' | 'KiB'
  /** Raw samples, one per iteration. */
  readonly samples: readonly number[]
  /** `figure` of the raw-floor row (same suite, same run) this row is compared with. */
  readonly floor?: string
  /** For throughput figures. */
  readonly higherIsBetter?: boolean
  /** Short free-text context printed under the table. */
  readonly note?: string
}

/** A suite: a named async function exported from a file in bench/suites/. */
export type Suite = () => Promise<BenchRow[]>
