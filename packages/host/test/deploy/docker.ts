import { randomBytes } from 'node:crypto'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { eventually } from 'dsh-testkit'
import { type RunOptions, runCommand } from './podman'

/**
 * A private Docker daemon for one test run (TOOLCHAIN.md: Docker 20.10 with its own data root, exec
 * root and socket). It gets a bridge of the test's own and `--iptables=false`, so it makes neither
 * docker0 nor DOCKER chains; published ports go through docker-proxy. `stop()` removes all of it.
 */

/** Programs the Docker test drives (podman only to hand the cached base over); missing ones fail it under CI=true. */
export const DOCKER_PROGRAMS = ['dockerd', 'docker', 'podman', 'runc', 'debootstrap', 'ip'] as const

/** The programs of {@link DOCKER_PROGRAMS} not on PATH. */
export function missingDockerPrograms(): string[] {
  return DOCKER_PROGRAMS.filter((program) => spawnSync('sh', ['-c', `command -v ${program}`]).status !== 0)
}

/** A running private dockerd; `env` points `docker` at it (DOCKER_HOST). */
export interface DockerDaemon {
  readonly env: NodeJS.ProcessEnv
  /** `unix://…` of its socket, for a `connect` argv. */
  readonly host: string
  /** The bridge it attaches containers to (ours, deleted by `stop`). */
  readonly bridge: string
  /** Stop it, wait for it to exit, delete the bridge and its folders; safe to call twice. */
  stop(): Promise<void>
}

/** `docker <args>` against the run's daemon. */
export function docker(daemon: DockerDaemon, args: readonly string[], options: Omit<RunOptions, 'env'> = {}) {
  return runCommand('docker', args, { ...options, env: daemon.env })
}

/** Mount points under `dir` still in this mount namespace (a daemon that left overlays behind). */
function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1] ?? '')
    .filter((point) => point === dir || point.startsWith(`${dir}/`))
}

/** Start dockerd with everything under a fresh folder in /var/tmp (overlay2 needs a real file system). */
export async function startDockerDaemon(): Promise<DockerDaemon> {
  const dir = mkdtempSync('/var/tmp/dsh-docker-')
  const suffix = randomBytes(3).toString('hex')
  const bridge = `dshdk${suffix}`
  // A /24 of 172.30.0.0/16 picked per run; a host route there is unlikely and `ip addr add` says so if not.
  const subnet = `172.30.${parseInt(suffix.slice(0, 2), 16)}`
  const host = `unix://${join(dir, 'docker.sock')}`
  const env = { ...process.env, DOCKER_HOST: host }
  let exited: Promise<void> = Promise.resolve()
  let pid: number | undefined
  let bridgeMade = false
  const stop = async () => {
    if (pid !== undefined) {
      try {
        process.kill(pid, 'SIGTERM')
      } catch {}
      pid = undefined
      await exited
    }
    if (bridgeMade) await runCommand('ip', ['link', 'del', bridge], { allowFailure: true })
    bridgeMade = false
    for (const point of mountsUnder(dir).reverse()) await runCommand('umount', ['-l', point], { allowFailure: true })
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await runCommand('ip', ['link', 'add', bridge, 'type', 'bridge'])
    bridgeMade = true
    await runCommand('ip', ['addr', 'add', `${subnet}.1/24`, 'dev', bridge])
    await runCommand('ip', ['link', 'set', bridge, 'up'])
    const log = openSync(join(dir, 'dockerd.log'), 'a')
    const child = spawn(
      'dockerd',
      [
        '--data-root',
        join(dir, 'data'),
        '--exec-root',
        join(dir, 'exec'),
        '--pidfile',
        join(dir, 'dockerd.pid'),
        '-H',
        host,
        '--bridge',
        bridge,
        '--iptables=false',
      ],
      { stdio: ['ignore', log, log] },
    )
    pid = child.pid
    exited = new Promise((resolve) => child.once('exit', () => resolve()))
    child.once('exit', () => (pid = undefined))
    await eventually(
      async () => {
        if (pid === undefined) throw new Error('dockerd exited before it answered')
        return (await runCommand('docker', ['version'], { env, allowFailure: true, timeoutMs: 10_000 })).status === 0
      },
      'the private dockerd to answer on its socket',
      60_000,
    ).catch((error: Error) => {
      const tail = existsSync(join(dir, 'dockerd.log')) ? readFileSync(join(dir, 'dockerd.log'), 'utf8').slice(-2000) : ''
      throw new Error(`${error.message}\n--- dockerd.log ---\n${tail}`)
    })
    return { env, host, bridge, stop }
  } catch (error) {
    await stop()
    throw error
  }
}
