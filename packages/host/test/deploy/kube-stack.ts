import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureBaseImage } from './base-image'
import { podman, type PodmanEnv, podmanEnv, runCommand } from './podman'
import { podmanSecretJson, renderKustomization, takeSecrets } from './render'

/** The repository's deploy/ folder. */
export const DEPLOY_DIR = fileURLToPath(new URL('../../../../deploy/', import.meta.url))

/** The repository's tsx, which runs deploy/context.ts. */
const TSX = fileURLToPath(new URL('../../../../node_modules/.bin/tsx', import.meta.url))

/** The container `podman kube play` makes of the Deployment's `mcp` container (`<pod>-<container>`). */
export const HTTP_CONTAINER = 'dsh-terminal-pod-0-mcp'
/** The container of the workspace Pod (`dsh-workspace-1`, container `target`): the exec target. */
export const TARGET_CONTAINER = 'dsh-workspace-1-target'

/** The image built from deploy/Containerfile and the manifests running under `podman kube play`. */
export interface KubeStack {
  readonly podman: PodmanEnv
  /** The image tag of this run (removed by `remove`). */
  readonly image: string
  /** `http://127.0.0.1:<hostPort>`: the Deployment's port published on loopback. */
  readonly origin: string
  /** The bearer token, as the rendered Secret holds it. */
  readonly token: string
  /** Path of the containers.conf every podman call uses (for a `connect` argv). */
  readonly containersConf: string
  /** `podman kube down`, the Secret, the image and the temporary files; safe to call twice. */
  remove(): Promise<void>
}

/** A free TCP port on loopback (the kernel's choice, released at once for the hostPort). */
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

/** Publish the Deployment's container port on 127.0.0.1, and give the Secret this run's token. */
function testPatch(hostPort: number, token: string) {
  return (file: string, text: string): string => {
    if (file === 'deployment.yaml') return text.replace(/^(\s*)containerPort: 8080$/m, `$1containerPort: 8080\n$1hostPort: ${hostPort}\n$1hostIP: 127.0.0.1`)
    if (file === 'secret.yaml') return text.replace(/^(\s*)token: .*$/m, `$1token: ${token}`)
    return text
  }
}

/** Build the image on the cached base, render deploy/kubernetes and play it. */
export async function startKubeStack(): Promise<KubeStack> {
  const env = podmanEnv()
  const temp = mkdtempSync(join(tmpdir(), 'dsh-kube-'))
  const image = `localhost/dsh-terminal-test:${randomBytes(6).toString('hex')}`
  const token = `test-${randomBytes(24).toString('base64url')}`
  const rendered = join(temp, 'rendered.yaml')
  let secrets: string[] = []
  let played = false
  let built = false
  const remove = async () => {
    if (played) await podman(env, ['kube', 'down', rendered], { allowFailure: true })
    played = false
    for (const name of secrets) await podman(env, ['secret', 'rm', name], { allowFailure: true })
    secrets = []
    if (built) await podman(env, ['rmi', '-f', image], { allowFailure: true })
    built = false
    rmSync(temp, { recursive: true, force: true })
    env.remove()
  }
  try {
    const base = await ensureBaseImage(env)
    // The context as a user makes it (deploy/build-image.sh runs the same command).
    const context = join(temp, 'context')
    await runCommand(TSX, [join(DEPLOY_DIR, 'context.ts'), context], { timeoutMs: 180_000 })
    built = true
    await podman(env, ['build', '-q', '-f', join(DEPLOY_DIR, 'Containerfile'), '--build-arg', `BASE=${base}`, '-t', image, context], { timeoutMs: 300_000 })
    const hostPort = await freePort()
    const all = renderKustomization(join(DEPLOY_DIR, 'kubernetes'), { image, patch: testPatch(hostPort, token) })
    const split = takeSecrets(all)
    for (const secret of split.secrets) {
      // A file, not stdin: podman only reads `-` from a named pipe, and node's pipes are sockets.
      const file = join(temp, `${secret.name}.json`)
      writeFileSync(file, podmanSecretJson(secret), { mode: 0o600 })
      await podman(env, ['secret', 'create', secret.name, file])
      rmSync(file)
      secrets.push(secret.name)
    }
    const secretToken = split.secrets.find((secret) => secret.name === 'dsh-terminal-token')?.stringData.token
    if (secretToken !== token) throw new Error('the rendered Secret does not carry the token')
    writeFileSync(rendered, split.rest)
    played = true
    await podman(env, ['kube', 'play', rendered], { timeoutMs: 180_000 })
    return { podman: env, image, origin: `http://127.0.0.1:${hostPort}`, token: secretToken, containersConf: env.env.CONTAINERS_CONF!, remove }
  } catch (error) {
    await remove()
    throw error
  }
}
