import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** File name of a composition. */
export const CONFIG_FILE = 'cordis.yml'

/** Name of the repository's root package.json, which marks the checkout that ships the default composition. */
const REPOSITORY_PACKAGE = 'dsh-terminal-monorepo'

/**
 * The dsh-terminal checkout this module runs from (from sources or from a build inside it), or
 * undefined for an installed package. It holds the default cordis.yml and is what `pnpm --dir` names.
 */
export function repositoryRoot(from: string = dirname(fileURLToPath(import.meta.url))): string | undefined {
  let dir = from
  for (let depth = 0; depth < 6; depth++) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === REPOSITORY_PACKAGE) return dir
      } catch {
        // An unreadable manifest is not the repository; keep walking up.
      }
    }
    const parent = dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  return undefined
}

/**
 * Which cordis.yml a command loads: `--config` (against `cwd`), else `cordis.yml` in `cwd`, else the
 * repository's default composition. Throws when none exists, naming the fix.
 */
export function resolveConfigPath(requested: string | undefined, cwd: string = process.cwd()): string {
  if (requested !== undefined) return resolve(cwd, requested)
  const local = join(cwd, CONFIG_FILE)
  if (existsSync(local)) return local
  const repo = repositoryRoot()
  if (repo && existsSync(join(repo, CONFIG_FILE))) return join(repo, CONFIG_FILE)
  throw new Error(`no ${CONFIG_FILE} in ${cwd}; pass --config <path> (see the dsh-host README for the format)`)
}
