import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { ensureBaseImage } from './base-image'
import { type DockerDaemon, docker, startDockerDaemon } from './docker'
import { DEPLOY_DIR } from './kube-stack'
import { podmanEnv, runCommand } from './podman'

/** The README's image tag; the daemon is private, so the plain name collides with nothing. */
export const DOCKER_IMAGE = 'dsh-terminal:latest'
/** The README's `docker run` options that let bubblewrap run inside (docs/containers.md says why). */
export const DOCKER_RUN_OPTIONS = ['--security-opt', 'systempaths=unconfined', '--security-opt', 'seccomp=unconfined'] as const

/** The image built with deploy/build-image.sh and two containers: the HTTP host and an exec target. */
export interface DockerStack {
  readonly daemon: DockerDaemon
  /** `http://127.0.0.1:<port>`: the HTTP host's 8080 published on loopback. */
  readonly origin: string
  readonly token: string
  /** The host folder bind-mounted at /workspace of the HTTP host. */
  readonly workspace: string
  readonly httpContainer: string
  /** The `target` mode container, for `docker exec -i <it> dsh-session-host --stdio`. */
  readonly targetContainer: string
  /** Remove the containers, stop the daemon, delete the temporary files; safe to call twice. */
  remove(): Promise<void>
}

/** A free TCP port on loopback (the kernel's choice, released at once for `-p`). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/** Start a private dockerd, hand it the cached base from Podman, build as the README says and run both modes. */
export async function startDockerStack(): Promise<DockerStack> {
  const pod = podmanEnv()
  const workspace = mkdtempSync(join('/var/tmp', 'dsh-docker-ws-'))
  const suffix = randomBytes(4).toString('hex')
  const httpContainer = `dsh-1-${suffix}`
  const targetContainer = `work-1-${suffix}`
  const token = `test-${randomBytes(24).toString('base64url')}`
  let daemon: DockerDaemon | undefined
  const remove = async () => {
    if (daemon) {
      await docker(daemon, ['rm', '-f', '-t', '0', httpContainer, targetContainer], { allowFailure: true })
      await daemon.stop()
    }
    daemon = undefined
    rmSync(workspace, { recursive: true, force: true })
    pod.remove()
  }
  try {
    daemon = await startDockerDaemon()
    // The same debootstrap base the Podman tests make (and cache), moved over as a docker archive.
    const base = await ensureBaseImage(pod)
    await runCommand('sh', ['-c', 'podman save --format docker-archive "$1" | docker load', 'sh', base], {
      env: { ...pod.env, DOCKER_HOST: daemon.host },
      timeoutMs: 300_000,
    })
    await runCommand(join(DEPLOY_DIR, 'build-image.sh'), ['docker', DOCKER_IMAGE, '--build-arg', `BASE=${base}`], { env: daemon.env, timeoutMs: 300_000 })
    const port = await freePort()
    await docker(daemon, [
      'run',
      '-d',
      '--name',
      httpContainer,
      ...DOCKER_RUN_OPTIONS,
      '-p',
      `127.0.0.1:${port}:8080`,
      '-e',
      `DSH_TERMINAL_TOKEN=${token}`,
      '-v',
      `${workspace}:/workspace`,
      DOCKER_IMAGE,
    ])
    await docker(daemon, ['run', '-d', '--name', targetContainer, ...DOCKER_RUN_OPTIONS, DOCKER_IMAGE, 'target'])
    return { daemon, origin: `http://127.0.0.1:${port}`, token, workspace, httpContainer, targetContainer, remove }
  } catch (error) {
    await remove()
    throw error
  }
}
