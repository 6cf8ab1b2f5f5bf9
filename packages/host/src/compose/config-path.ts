import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { PACKAGE_ROOT } from '../package-root'

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
 * The compositions `--preset` names, as paths under the compositions root: the repository checkout,
 * or dist/compositions/ of an installed package (its build copies them there, same layout).
 */
export const PRESETS = Object.freeze({
  default: CONFIG_FILE,
  'read-only': 'examples/read-only.yml',
  'danger-full-access': 'examples/danger-full-access.yml',
  recorded: 'examples/recorded.yml',
  durable: 'examples/durable.yml',
})

/** A name `--preset` accepts. */
export type PresetName = keyof typeof PRESETS

/** Where an installed package keeps its copies of the default composition and its overlays. */
export const SHIPPED_COMPOSITIONS: string = join(PACKAGE_ROOT, 'dist', 'compositions')

/** True for a name of {@link PRESETS}; the command line checks `--preset` with it. */
export function isPresetName(name: string): name is PresetName {
  return Object.hasOwn(PRESETS, name)
}

/**
 * The folder presets resolve in: the first candidate holding a cordis.yml, by default the checkout
 * when running from one (its files are the ones being edited), then the copies shipped in the package.
 */
export function compositionsRoot(candidates: readonly (string | undefined)[] = [repositoryRoot(), SHIPPED_COMPOSITIONS]): string | undefined {
  for (const root of candidates) {
    if (root !== undefined && existsSync(join(root, PRESETS.default))) return root
  }
  return undefined
}

/** The file of a preset; throws, naming the missing file, when this installation lacks it. */
export function presetPath(name: PresetName, root: string | undefined = compositionsRoot()): string {
  const path = join(root ?? SHIPPED_COMPOSITIONS, PRESETS[name])
  if (!existsSync(path)) throw new Error(`preset ${name} is not available: ${path} is missing (a checkout builds it with pnpm build)`)
  return path
}

/**
 * Which cordis.yml a command loads: `--config` (against `cwd`), else `cordis.yml` in `cwd`, else the
 * default composition of {@link compositionsRoot} (the checkout's, or the one shipped in the
 * package). Throws when none exists, naming the fix.
 */
export function resolveConfigPath(
  requested: string | undefined,
  cwd: string = process.cwd(),
  defaultRoot: () => string | undefined = compositionsRoot,
): string {
  if (requested !== undefined) return resolve(cwd, requested)
  const local = join(cwd, CONFIG_FILE)
  if (existsSync(local)) return local
  const root = defaultRoot()
  if (root !== undefined && existsSync(join(root, PRESETS.default))) return join(root, PRESETS.default)
  throw new Error(
    `no ${CONFIG_FILE} in ${cwd} and no default composition at ${join(SHIPPED_COMPOSITIONS, PRESETS.default)}; pass --config <path> (see the dsh-terminal-mcp README for the format)`,
  )
}
