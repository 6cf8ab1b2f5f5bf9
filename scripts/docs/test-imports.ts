import { readFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { join, posix } from 'node:path'
import ts from 'typescript'
import { moduleImports, packageName } from './imports'
import { typeScriptFiles, type WorkspacePackage } from './workspace'

/** package.json fields whose names a test may import (src may not use devDependencies). */
const DECLARING_FIELDS = ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'] as const

/**
 * Imports in a package's `test/` that bypass its package.json, so the layer check cannot see them.
 * Each import must be a relative path that stays inside the package, a node builtin, the package
 * itself, or a package its package.json declares (devDependencies count). A workspace package must
 * be declared by the package itself; any other package may also come from the root package.json,
 * which holds the tooling every test shares (vitest). One message per import, naming file and line.
 */
export function checkTestImports(root: string, packages: readonly WorkspacePackage[]): string[] {
  const workspaceNames = new Set(packages.map((pkg) => pkg.name))
  const rootDeclared = declaredNames(join(root, 'package.json'))
  const failures: string[] = []
  for (const pkg of packages) {
    const declared = declaredNames(join(root, pkg.dir, 'package.json'))
    for (const file of typeScriptFiles(root, `${pkg.dir}/test`)) {
      const source = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true)
      for (const { specifier, line } of moduleImports(source)) {
        const problem = importProblem(pkg, specifier, file, { declared, rootDeclared, workspaceNames })
        if (problem) failures.push(`${file}:${line}: ${problem}`)
      }
    }
  }
  return failures
}

/** What a test file of `pkg` may import besides relative paths and node builtins. */
interface Allowed {
  readonly declared: ReadonlySet<string>
  readonly rootDeclared: ReadonlySet<string>
  readonly workspaceNames: ReadonlySet<string>
}

/** Why `specifier`, imported by `file` of `pkg`, breaks the rule; undefined when it keeps it. */
function importProblem(pkg: WorkspacePackage, specifier: string, file: string, allowed: Allowed): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/')) {
    const target = specifier.startsWith('/') ? specifier : posix.normalize(posix.join(posix.dirname(file), specifier))
    if (target === pkg.dir || target.startsWith(`${pkg.dir}/`)) return undefined
    return `imports '${specifier}', which leaves ${pkg.dir}; import another package by its name, declared in ${pkg.dir}/package.json devDependencies`
  }
  if (specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0]!)) return undefined
  const name = packageName(specifier)
  if (name === pkg.name || allowed.declared.has(name)) return undefined
  if (!allowed.workspaceNames.has(name) && allowed.rootDeclared.has(name)) return undefined
  return `imports ${name}, which ${pkg.dir}/package.json does not declare; add it to devDependencies`
}

/** Names a package.json declares in any dependency field. */
function declaredNames(manifestPath: string): Set<string> {
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, unknown>
  const names = new Set<string>()
  for (const field of DECLARING_FIELDS) {
    const entries = manifest[field]
    if (entries && typeof entries === 'object') for (const name of Object.keys(entries)) names.add(name)
  }
  return names
}
