import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, posix } from 'node:path'
import { fileURLToPath } from 'node:url'

/** How a package names another workspace package in its package.json. */
export type DependencyKind = 'dependencies' | 'peerDependencies' | 'optionalDependencies' | 'devDependencies'

/** Kinds that are part of what a consumer of the published package loads. */
export const RUNTIME_KINDS: readonly DependencyKind[] = ['dependencies', 'peerDependencies', 'optionalDependencies']

const ALL_KINDS: readonly DependencyKind[] = [...RUNTIME_KINDS, 'devDependencies']

/** One edge of the workspace graph: `from` names `to` in its `kind` field. */
export interface WorkspaceDependency {
  /** The workspace package depended on. */
  readonly name: string
  /** The package.json field that names it. */
  readonly kind: DependencyKind
}

/** A workspace package as the docs tooling sees it. */
export interface WorkspacePackage {
  /** The `name` field of its package.json. */
  readonly name: string
  /** Its `description` field ('' when absent). */
  readonly description: string
  /** Directory relative to the repository root, with forward slashes (e.g. `packages/terminal/terminal`). */
  readonly dir: string
  /** Workspace packages it names, sorted by name then kind. */
  readonly dependencies: readonly WorkspaceDependency[]
  /** Repository-relative path of `src/index.ts` when the package has one. */
  readonly entry: string | undefined
  /** Repository-relative path of its README.md when it has one. */
  readonly readme: string | undefined
}

/** The repository root: two levels above this file (`scripts/docs/`). */
export function repositoryRoot(): string {
  return fileURLToPath(new URL('../..', import.meta.url))
}

/** Byte-wise comparison, so the order never depends on the machine's locale. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * Read every workspace package named by the `packages:` globs of pnpm-workspace.yaml (only `*`
 * segments are supported, which is all this repository uses). Sorted by name.
 */
export function loadWorkspace(root: string): WorkspacePackage[] {
  const dirs = new Set<string>()
  for (const pattern of workspacePatterns(root)) {
    for (const dir of expand(root, pattern.split('/'))) {
      if (existsSync(join(root, dir, 'package.json'))) dirs.add(dir)
    }
  }
  const manifests = [...dirs].map((dir) => ({ dir, manifest: readJson(join(root, dir, 'package.json')) }))
  const names = new Set(manifests.map(({ manifest }) => String(manifest.name)))
  const packages = manifests.map(({ dir, manifest }): WorkspacePackage => {
    const dependencies: WorkspaceDependency[] = []
    for (const kind of ALL_KINDS) {
      const field = manifest[kind]
      if (!field || typeof field !== 'object') continue
      for (const name of Object.keys(field as Record<string, unknown>)) {
        if (names.has(name)) dependencies.push({ name, kind })
      }
    }
    dependencies.sort((a, b) => compareText(a.name, b.name) || ALL_KINDS.indexOf(a.kind) - ALL_KINDS.indexOf(b.kind))
    const entry = posix.join(dir, 'src/index.ts')
    const readme = posix.join(dir, 'README.md')
    return {
      name: String(manifest.name),
      description: typeof manifest.description === 'string' ? manifest.description : '',
      dir,
      dependencies,
      entry: existsSync(join(root, entry)) ? entry : undefined,
      readme: existsSync(join(root, readme)) ? readme : undefined,
    }
  })
  return packages.sort((a, b) => compareText(a.name, b.name))
}

/** The globs listed under `packages:` in pnpm-workspace.yaml. */
function workspacePatterns(root: string): string[] {
  const patterns: string[] = []
  let inPackages = false
  for (const line of readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8').split('\n')) {
    if (/^\S/.test(line)) inPackages = /^packages:\s*$/.test(line)
    const item = inPackages ? /^\s+-\s+['"]?([^'"#\s]+)['"]?/.exec(line) : null
    if (item?.[1]) patterns.push(item[1])
  }
  return patterns
}

/** Expand a glob given as path segments; `*` matches any directory name except node_modules. */
function expand(root: string, segments: string[], prefix = ''): string[] {
  const [head, ...rest] = segments
  if (head === undefined) return [prefix]
  const candidates =
    head === '*'
      ? readdirSync(join(root, prefix), { withFileTypes: true })
          .filter((entry) => entry.isDirectory() && entry.name !== 'node_modules' && !entry.name.startsWith('.'))
          .map((entry) => entry.name)
      : existsSync(join(root, prefix, head))
        ? [head]
        : []
  return candidates.sort(compareText).flatMap((name) => expand(root, rest, prefix ? `${prefix}/${name}` : name))
}

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>
}

/**
 * Repository-relative TypeScript sources under `dir` (`.ts`, `.tsx`, `.mts`, `.cts`, not `.d.ts`),
 * sorted; skips node_modules, dist and dot folders, and any folder with a package.json of its own
 * (a fixture package answers to its own manifest).
 */
export function typeScriptFiles(root: string, dir: string): string[] {
  if (!existsSync(join(root, dir))) return []
  return readdirSync(join(root, dir), { withFileTypes: true })
    .sort((a, b) => compareText(a.name, b.name))
    .flatMap((entry) => {
      const path = `${dir}/${entry.name}`
      if (entry.isDirectory()) {
        const skipped = entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')
        return skipped || existsSync(join(root, path, 'package.json')) ? [] : typeScriptFiles(root, path)
      }
      return entry.isFile() && /\.[cm]?tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : []
    })
}
