import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { podman, type PodmanEnv, runCommand } from './podman'

/**
 * The tests' stand-in for docker.io/library/node:20-bookworm-slim (no registry is reachable):
 * Debian bookworm from `debootstrap --variant=minbase` plus this machine's own node binary.
 * Tagged by a hash of its inputs and kept on purpose, so a second run on one machine skips it.
 */
const SUITE = 'bookworm'
const PACKAGES = ['bash', 'bubblewrap', 'procps', 'libstdc++6', 'ca-certificates']
/** Bump when the recipe below changes in a way its inputs do not show. */
const RECIPE = 'dsh-test-base 1'
const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

/** The Debian mirror apt already uses here (first `URIs:`/`deb` line naming /debian), else deb.debian.org. */
export function aptMirror(): string {
  const files = ['/etc/apt/sources.list.d/debian.sources', '/etc/apt/sources.list']
  for (const file of files.filter((path) => existsSync(path))) {
    const text = readFileSync(file, 'utf8')
    const uri = /^URIs:\s*(\S+\/debian)\/?\s*$/m.exec(text)?.[1] ?? /^deb\s+(?:\[[^\]]*\]\s+)?(\S+\/debian)\/?\s/m.exec(text)?.[1]
    if (uri) return uri
  }
  return 'http://deb.debian.org/debian'
}

/** The image name for this machine's inputs (mirror, packages, node binary, recipe). */
export function baseImageTag(): string {
  const node = realpathSync(process.execPath)
  const hash = createHash('sha256')
  hash.update(`${RECIPE}\n${SUITE}\n${PACKAGES.join(',')}\n${aptMirror()}\n`)
  hash.update(readFileSync(node))
  return `localhost/dsh-test-base:${hash.digest('hex').slice(0, 16)}`
}

/** The base image, built if this machine does not have it yet; resolves with its tag. */
export async function ensureBaseImage(env: PodmanEnv): Promise<string> {
  const tag = baseImageTag()
  const exists = await podman(env, ['image', 'exists', tag], { allowFailure: true })
  if (exists.status === 0) return tag
  const dir = mkdtempSync(join('/var/tmp', 'dsh-test-base-'))
  try {
    const rootfs = join(dir, 'rootfs')
    await runCommand('debootstrap', ['--variant=minbase', `--include=${PACKAGES.join(',')}`, SUITE, rootfs, aptMirror()], { timeoutMs: 300_000 })
    copyFileSync(realpathSync(process.execPath), join(rootfs, 'usr/local/bin/node'))
    await runCommand('sh', ['-c', `tar -C "$1" -c . | podman import --change "ENV ${PATH_ENV}" - "$2"`, 'sh', rootfs, tag], {
      env: env.env,
      timeoutMs: 300_000,
    })
    return tag
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
