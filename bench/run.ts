// `pnpm bench [name…] [--only <substring>]`: run every suite in bench/suites/ (or the named ones) and
// print one table per suite; `--only` keeps the rows whose figure contains the substring (and their
// floors). Each suite measures its own raw floor in the same run, so ratios compare like with like.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ONLY, shownRows, suiteNames } from './lib/row-filter'
import { renderTable } from './lib/table'
import type { BenchRow, Suite } from './lib/types'

const suitesDir = new URL('./suites/', import.meta.url)
const wanted = suiteNames(process.argv.slice(2))

console.log(`# dsh-terminal bench — node ${process.version}, ${process.platform}/${process.arch}, ${cpus().length} cpu(s), ${new Date().toISOString()}\n`)

// Confined sessions keep a private home per workspace under the state directory, and every run's
// workspaces are new: the run's homes go to a directory of its own, removed when it ends.
const stateHome = mkdtempSync(join(tmpdir(), 'dsh-bench-state-'))
process.env.XDG_STATE_HOME = stateHome
process.on('exit', () => rmSync(stateHome, { recursive: true, force: true }))

let failed = false
for (const file of readdirSync(suitesDir)
  .filter((name) => name.endsWith('.ts'))
  .sort()) {
  const module = (await import(pathToFileURL(new URL(file, suitesDir).pathname).href)) as Record<string, unknown>
  for (const [name, suite] of Object.entries(module)) {
    if (typeof suite !== 'function' || (wanted.length > 0 && !wanted.includes(name))) continue
    try {
      const rows: BenchRow[] = shownRows(await (suite as Suite)())
      // A filtered run leaves out the suites none of whose rows matched.
      if (rows.length > 0 || ONLY === undefined) console.log(`${renderTable(name, rows)}\n`)
    } catch (error) {
      failed = true
      console.error(`## ${name}\n\nfailed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    }
  }
}
// A suite may also set exitCode itself (a failed group of rows whose other rows still print).
if (failed) process.exitCode = 1
