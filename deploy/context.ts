/**
 * The build context of `deploy/Containerfile`, made offline from the workspace: the host and the
 * session host each `pnpm deploy`ed (their built packages and production dependencies, from the
 * lockfile and the local store) into `app/`, one launcher per bin, and the entrypoint. Needs
 * `pnpm build` first. CLI: `tsx deploy/context.ts <empty dir>`.
 */
import { spawn } from 'node:child_process'
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadWorkspace } from '../scripts/docs/workspace'

/** Where the installed tree lives inside the image (the Containerfile copies `app/` there). */
export const IMAGE_APP_DIR = '/opt/dsh'

/** A failure making the context, with a stable code and what to do about it. */
export class DeployContextError extends Error {
  constructor(
    readonly code: 'NOT_BUILT' | 'INSTALL_FAILED',
    message: string,
  ) {
    super(message)
    this.name = 'DeployContextError'
  }
}

/** The repository root (this file sits in `deploy/`). */
const ROOT = fileURLToPath(new URL('..', import.meta.url))

interface Manifest {
  name: string
  version: string
  private?: boolean
  bin?: Record<string, string>
  devDependencies?: Record<string, string>
}

function readManifest(dir: string): Manifest {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest
}

/** Run a command without the npm_/pnpm_ settings of an outer `pnpm run`; rejects with its output. */
function run(command: string, args: readonly string[], cwd: string, code: DeployContextError['code']): Promise<void> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(npm_|pnpm_)/i.test(key)))
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
    child.on('error', (error) => fail(new DeployContextError(code, `${command}: ${error.message}`)))
    child.on('close', (status) =>
      status === 0 ? done() : fail(new DeployContextError(code, `\`${command} ${args.join(' ')}\` in ${cwd} ended with ${status}:\n${output}`)),
    )
  })
}

/** What {@link makeContext} made. */
export interface DeployContext {
  /** The folder to pass to `podman build` / `docker build` with `-f deploy/Containerfile`. */
  readonly dir: string
  /** The bins the image has launchers for (e.g. `dsh-terminal-mcp`, `dsh-session-host`). */
  readonly bins: readonly string[]
}

/** The packages whose bins the image runs, each deployed into `app/<folder>`. */
const DEPLOYED = [
  { name: 'dsh-terminal-mcp', folder: 'mcp' },
  { name: 'dsh-session-host', folder: 'session-host' },
] as const

/** Cordis is every plugin's peer: `pnpm deploy --prod` leaves it in the virtual store only, so link it on top. */
function linkCordis(app: string): void {
  const store = join(app, 'node_modules/.pnpm')
  const entry = readdirSync(store).find((name) => /^@deepseek-ai\+cordis@\d/.test(name))
  if (!entry) throw new DeployContextError('INSTALL_FAILED', `${app}: no @deepseek-ai/cordis in node_modules/.pnpm`)
  mkdirSync(join(app, 'node_modules/@deepseek-ai'), { recursive: true })
  const link = join(app, 'node_modules/@deepseek-ai/cordis')
  if (!existsSync(link)) symlinkSync(`../.pnpm/${entry}/node_modules/@deepseek-ai/cordis`, link)
}

/** Fill the empty folder `dir` with the image's build context (see the file comment). */
export async function makeContext(dir: string): Promise<DeployContext> {
  const workspace = loadWorkspace(ROOT).map((pkg) => ({ dir: join(ROOT, pkg.dir), manifest: readManifest(join(ROOT, pkg.dir)) }))
  const publics = workspace.filter((pkg) => !pkg.manifest.private)
  const unbuilt = publics.filter((pkg) => !existsSync(join(pkg.dir, 'dist/index.js')))
  if (unbuilt.length) throw new DeployContextError('NOT_BUILT', `${unbuilt.map((pkg) => pkg.manifest.name).join(', ')} have no dist: run \`pnpm build\` first`)
  const binDir = join(dir, 'bin')
  mkdirSync(binDir, { recursive: true })
  // `pnpm deploy --prod` re-installs the workspace it runs in without devDependencies, so it runs
  // in a copy (manifests, lockfile, built packages; no node_modules), never in the checkout.
  const shadow = join(dir, 'workspace')
  mkdirSync(shadow)
  const copied = ['package.json', 'pnpm-workspace.yaml', 'pnpm-lock.yaml', 'LICENSE', 'packages']
  await run('bash', ['-c', 'tar -C "$1" --exclude=node_modules -cf - "${@:3}" | tar -C "$2" -xf -', 'bash', ROOT, shadow, ...copied], ROOT, 'INSTALL_FAILED')
  const bins: string[] = []
  for (const { name, folder } of DEPLOYED) {
    const app = join(dir, 'app', folder)
    // The workspace's lockfile pins every dependency, so the local store has them all (--offline).
    await run('pnpm', ['--filter', name, 'deploy', '--prod', '--offline', '--legacy', app], shadow, 'INSTALL_FAILED')
    linkCordis(app)
    const manifest = readManifest(app)
    for (const [bin, target] of Object.entries(manifest.bin ?? {})) {
      const path = join(binDir, bin)
      writeFileSync(path, `#!/bin/sh\nexec node ${IMAGE_APP_DIR}/${folder}/${target.replace(/^\.\//, '')} "$@"\n`)
      chmodSync(path, 0o755)
      bins.push(bin)
    }
  }
  rmSync(shadow, { recursive: true, force: true })
  copyFileSync(join(ROOT, 'deploy/entrypoint.sh'), join(dir, 'entrypoint.sh'))
  return { dir, bins }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const target = process.argv[2]
  if (!target) {
    process.stderr.write('usage: tsx deploy/context.ts <empty folder>\n')
    process.exit(2)
  }
  try {
    const made = await makeContext(resolve(target))
    process.stdout.write(`deploy context in ${made.dir} (bins: ${made.bins.join(', ')})\n`)
  } catch (error) {
    process.stderr.write(`deploy context: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  }
}
