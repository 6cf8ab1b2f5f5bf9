// Figures a suite measures in a process of its own: a child node with this one's loader (tsx, the
// dsh-source condition) and `--expose-gc`, running a script from bench/children/ that prints one JSON
// line. Memory of the floor and of the stack cannot be told apart inside one process.
import { spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'

/** Run `bench/children/<script>.ts` with `args` and parse the last line it printed as JSON; rejects on a failure. */
export function runChild<T>(script: string, args: readonly string[] = []): Promise<T> {
  const path = new URL(`../children/${script}.ts`, import.meta.url).pathname
  const child = spawn(process.execPath, [...process.execArgv, '--expose-gc', path, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.setEncoding('utf8').on('data', (text: string) => (out += text))
  child.stderr.setEncoding('utf8').on('data', (text: string) => (err += text))
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => {
      const last = out.trim().split('\n').pop() ?? ''
      if (code !== 0) return reject(new Error(`bench child ${script} ${args.join(' ')} failed (${signal ?? code}): ${err.trim().slice(-2000)}`))
      try {
        resolve(JSON.parse(last) as T)
      } catch {
        reject(new Error(`bench child ${script} printed no JSON line: ${out.slice(-500)} ${err.slice(-500)}`))
      }
    })
  })
}

/** This process's peak RSS (VmHWM) in bytes since the last {@link resetPeakRss}. */
export function peakRss(): number {
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'latin1'))
  if (!match) throw new Error('bench: /proc/self/status has no VmHWM line')
  return Number(match[1]) * 1024
}

/** Start a new peak-RSS window: the kernel sets VmHWM back to the current RSS (`clear_refs` 5). */
export function resetPeakRss(): void {
  writeFileSync('/proc/self/clear_refs', '5')
}

/** A full garbage collection (the child runs with `--expose-gc`), so RSS shows what is still held. */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc
  if (!gc) throw new Error('bench: run this child with --expose-gc')
  gc()
}
