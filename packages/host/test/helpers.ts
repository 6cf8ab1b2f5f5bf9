import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Composition, loadComposition } from '../src/compose/load-config'

/** The repository checkout (packages/host/test → ../../..). */
export const REPO_ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)))

/** The default composition and the overlays. */
export const DEFAULT_CONFIG = join(REPO_ROOT, 'cordis.yml')
export const SNAPSHOT_CONFIG = join(REPO_ROOT, 'examples/snapshot.yml')
export const READ_ONLY_CONFIG = join(REPO_ROOT, 'examples/read-only.yml')
export const DANGER_CONFIG = join(REPO_ROOT, 'examples/danger-full-access.yml')

/** The CLI from sources, and the tsx binary that runs it without a build (as `pnpm start` does). */
export const CLI = join(REPO_ROOT, 'packages/host/src/cli.ts')
export const TSX = join(REPO_ROOT, 'node_modules/.bin/tsx')

/** argv prefix that runs the CLI from sources. */
export const CLI_ARGS = ['--conditions=dsh-source', CLI]

/** The nine tools of the default composition, sorted by name. */
export const ALL_TOOLS = [
  'job_kill',
  'job_list',
  'job_output',
  'terminal_close',
  'terminal_list',
  'terminal_open',
  'terminal_read',
  'terminal_send',
  'terminal_signal',
]

/** Load a composition quietly, collecting its log lines for assertions. */
export async function load(configPath: string, log: string[] = []): Promise<Composition> {
  return loadComposition({ configPath, log: (line) => log.push(line) })
}

/** A fresh temporary directory, removed by the returned cleanup. */
export async function tempDir(prefix: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) }
}
