import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * Podman as these machines need it (TOOLCHAIN.md): runc instead of crun (hybrid cgroups) and capped
 * ulimits (no CAP_SYS_RESOURCE), through a containers.conf of the test's own.
 */
const CONTAINERS_CONF = `[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
`

/** Programs the container tests drive; a missing one fails the tests under CI=true. */
export const CONTAINER_PROGRAMS = ['podman', 'runc', 'debootstrap'] as const

/** The programs of {@link CONTAINER_PROGRAMS} not on PATH. */
export function missingPrograms(): string[] {
  return CONTAINER_PROGRAMS.filter((program) => spawnSync('sh', ['-c', `command -v ${program}`]).status !== 0)
}

/** A failed podman (or other) command, with both streams. */
export class CommandFailed extends Error {
  readonly code = 'COMMAND_FAILED'
}

/** The containers.conf folder of one test run; `remove()` deletes it. */
export interface PodmanEnv {
  readonly env: NodeJS.ProcessEnv
  remove(): void
}

/** Write the containers.conf and return the environment every podman call of the run uses. */
export function podmanEnv(): PodmanEnv {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-podman-'))
  const conf = join(dir, 'containers.conf')
  writeFileSync(conf, CONTAINERS_CONF)
  return { env: { ...process.env, CONTAINERS_CONF: conf }, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/** Options of {@link runCommand}. */
export interface RunOptions {
  env?: NodeJS.ProcessEnv
  cwd?: string
  /** Written to stdin, which is then closed. */
  input?: Buffer | string
  /** Killed (and failed) after this long; a hang fails instead of stalling CI. */
  timeoutMs?: number
  /** Resolve with the result whatever the exit status. */
  allowFailure?: boolean
}

/** Run a command to its end; rejects with {@link CommandFailed} on a non-zero exit unless allowed. */
export function runCommand(
  command: string,
  args: readonly string[],
  options: RunOptions = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const timeoutMs = options.timeoutMs ?? 120_000
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env ?? process.env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on('close', (status, signal) => {
      clearTimeout(timer)
      if (status === 0 || options.allowFailure) resolve({ status, stdout, stderr })
      else reject(new CommandFailed(`\`${command} ${args.join(' ')}\` ended with ${status ?? signal}\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`))
    })
    child.stdin.on('error', () => {})
    child.stdin.end(options.input ?? '')
  })
}

/** `podman <args>` with the run's containers.conf. */
export function podman(env: PodmanEnv, args: readonly string[], options: Omit<RunOptions, 'env'> = {}) {
  return runCommand('podman', args, { ...options, env: env.env })
}
