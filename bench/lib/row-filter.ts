// `--only <substring>`: run and print only the rows whose figure contains the substring (case
// ignored), with the floors they point at. Suites ask `wants(...)` before measuring a group of rows,
// so a filtered run skips the work of every other group, not just its printing.
import type { BenchRow } from './types'

/** The `--only` value (`--only x` or `--only=x`), lower-cased; undefined runs every row. */
export const ONLY: string | undefined = onlyFrom(process.argv.slice(2))

/** The command-line words that name suites: everything but options and the `--only` value. */
export function suiteNames(args: readonly string[]): string[] {
  const names: string[] = []
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!
    if (arg === '--only') index++
    else if (!arg.startsWith('-')) names.push(arg)
  }
  return names
}

/** True when no filter is set or any of `figures` (the rows a group measures, floors included) matches it. */
export function wants(...figures: readonly string[]): boolean {
  return ONLY === undefined || figures.some((figure) => figure.toLowerCase().includes(ONLY))
}

/** The rows a filtered run prints: those that match, then every floor one of them points at. */
export function shownRows(rows: readonly BenchRow[]): BenchRow[] {
  if (ONLY === undefined) return [...rows]
  const matching = new Set(rows.filter((row) => wants(row.figure)).map((row) => row.figure))
  for (const row of rows) if (matching.has(row.figure) && row.floor) matching.add(row.floor)
  return rows.filter((row) => matching.has(row.figure))
}

function onlyFrom(args: readonly string[]): string | undefined {
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!
    if (arg === '--only') return args[index + 1]?.toLowerCase()
    if (arg.startsWith('--only=')) return arg.slice('--only='.length).toLowerCase()
  }
  return undefined
}
