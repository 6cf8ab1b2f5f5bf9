import { existsSync, realpathSync } from 'node:fs'
import { dirname, join, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The directory that holds the host's own code for a file of it: the outermost `node_modules`
 * on its path when it was installed from a registry, else the nearest pnpm workspace root (a
 * source checkout), else its package root. A write there would run as the host on its next start.
 */
export function installationRoot(file: string, exists: (path: string) => boolean = existsSync): string | undefined {
  const parts = file.split(sep)
  const modules = parts.indexOf('node_modules')
  if (modules > 0) return parts.slice(0, modules + 1).join(sep)
  let packageRoot: string | undefined
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (exists(join(dir, 'pnpm-workspace.yaml'))) return dir
    if (packageRoot === undefined && exists(join(dir, 'package.json'))) packageRoot = dir
    if (dirname(dir) === dir) return packageRoot
  }
}

/**
 * The installation roots of the running host: where this provider's module and the process's entry
 * script live, canonical and without repeats.
 */
export function hostInstallationRoots(files: readonly (string | undefined)[] = [fileURLToPath(import.meta.url), process.argv[1]]): string[] {
  const roots = new Set<string>()
  for (const file of files) {
    if (file === undefined || file === '') continue
    const real = canonicalSync(file)
    const root = real === undefined ? undefined : installationRoot(real)
    const canonicalRoot = root === undefined ? undefined : canonicalSync(root)
    if (canonicalRoot !== undefined) roots.add(canonicalRoot)
  }
  return [...roots]
}

function canonicalSync(path: string): string | undefined {
  try {
    return realpathSync(path)
  } catch {
    return undefined
  }
}
