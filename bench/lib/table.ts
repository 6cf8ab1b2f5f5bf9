import { summarize } from './stats'
import type { BenchRow } from './types'

/** Format a number with 3 significant digits, switching to integers for big values. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return '–'
  if (Math.abs(value) >= 100) return value.toFixed(0)
  if (Math.abs(value) >= 10) return value.toFixed(1)
  return value.toFixed(2)
}

/** Ratio of a row's p50 to its floor's p50 ("2.31×"), inverted for throughput; '' without a floor. */
export function ratio(row: BenchRow, rows: readonly BenchRow[]): string {
  if (!row.floor) return ''
  const floor = rows.find((candidate) => candidate.figure === row.floor)
  if (!floor) return '?'
  const mine = summarize(row.samples).p50
  const base = summarize(floor.samples).p50
  const value = row.higherIsBetter ? base / mine : mine / base
  return `${formatNumber(value)}×`
}

/** Render a suite's rows as an aligned text table (floors marked "floor"), followed by notes. */
export function renderTable(suite: string, rows: readonly BenchRow[]): string {
  const header = ['figure', 'n', 'p50', 'p95', 'max', 'unit', 'vs floor (p50)']
  const body = rows.map((row) => {
    const stats = summarize(row.samples)
    const isFloor = rows.some((other) => other.floor === row.figure)
    return [
      row.figure,
      String(stats.n),
      formatNumber(stats.p50),
      formatNumber(stats.p95),
      formatNumber(stats.max),
      row.unit,
      isFloor ? 'floor' : ratio(row, rows),
    ]
  })
  const widths = header.map((title, column) => Math.max(title.length, ...body.map((cells) => cells[column]!.length)))
  const line = (cells: string[]) => cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ')
  const out = [`## ${suite}`, '', line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...body.map(line)]
  const notes = rows.filter((row) => row.note)
  if (notes.length) out.push('', ...notes.map((row) => `- ${row.figure}: ${row.note}`))
  return out.join('\n')
}
