import { spawn } from 'node:child_process'
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs'
import { mkdtemp, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { probeBwrap } from 'dsh-sandbox-local/internal'

/**
 * Why real-bwrap tests cannot run here, or undefined when they can. On CI bwrap is installed by
 * .ci/run, so an unavailable sandbox there is a failure, never a silent skip.
 */
export const bwrapUnavailable: string | undefined = await probeBwrap('bwrap').then(
  () => undefined,
  (error: unknown) => (error instanceof Error ? error.message : String(error)),
)

if (bwrapUnavailable !== undefined) {
  if (process.env.CI) throw new Error(`bubblewrap must work on CI: ${bwrapUnavailable}`)
  console.warn(`skipping real-bwrap tests: ${bwrapUnavailable}`)
}

/** Generous bound on waiting for a process event; a correct run answers within milliseconds. */
export const DEADLINE_MS = 20_000

/** A fresh canonical directory under `parent`, removed by the returned cleanup. */
export async function scratchDir(prefix: string, parent = tmpdir()): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await realpath(await mkdtemp(join(parent, `dsh-sandbox-${prefix}-`)))
  return { path, remove: () => rm(path, { recursive: true, force: true }) }
}

/** Result of running a command to completion. */
export interface RunResult {
  code: number | null
  stdout: string
  stderr: string
}

/** Run argv (already confined) with piped stdio and collect everything it printed. */
export function run(argv: readonly string[], cwd?: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const [command = '', ...args] = argv
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/**
 * Run argv with stderr in a file under `directory`, as a terminal would take it: the host writes a
 * refused start's reason through /proc/<init>/fd/2, which child_process's socket pairs cannot be opened as.
 */
export function runToFile(argv: readonly string[], directory: string): Promise<RunResult> {
  const file = join(directory, `.stderr-${Math.random().toString(16).slice(2)}`)
  const stderr = openSync(file, 'w')
  return new Promise((resolve, reject) => {
    const [command = '', ...args] = argv
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', stderr] })
    closeSync(stderr)
    let stdout = ''
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.on('error', reject)
    child.on('close', (code) => {
      const text = readFileSync(file, 'utf8')
      rmSync(file, { force: true })
      resolve({ code, stdout, stderr: text })
    })
  })
}

/** Network interface names visible to the reading process's network namespace. */
export function interfaces(procNetDev: string): string[] {
  return procNetDev
    .split('\n')
    .slice(2)
    .map((line) => line.split(':')[0]?.trim() ?? '')
    .filter((name) => name !== '')
    .sort()
}
