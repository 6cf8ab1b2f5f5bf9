import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import type { PackageApi } from './api-catalog'
import { typeScriptFiles, type WorkspacePackage } from './workspace'

/** Exports every plugin module has; Cordis reads them, no package imports them by name. */
const PLUGIN_EXPORTS: ReadonlySet<string> = new Set(['name', 'inject', 'Config', 'apply'])

/** Folders outside `packages/` whose files use the packages as a consumer would. */
const CONSUMER_DIRS = ['bench', 'examples', 'scripts']

/** Every name of a package's entry may be used: `import * as x`, `export *`, or `import('pkg')`. */
const WHOLE_ENTRY = '*'

/**
 * A documented public API: names a package exports for users outside this repository (embedders,
 * plugin authors), which therefore stay exported although no package here imports them.
 */
export interface PublicApiEntry {
  /** The package name. */
  readonly package: string
  /** The names kept, or `*` for the whole entry (a package whose index is the documented API). */
  readonly names: readonly string[] | '*'
  /** Where the API is documented, or why a user needs it: the reason the name stays. */
  readonly why: string
}

/**
 * The small-index rule: a name exported from a package's main entry (`src/index.ts`) must be
 * imported by some other package (its sources or tests), by bench/, examples/ or scripts/, or be
 * listed in the public API table. Otherwise it belongs behind `./internal`, or nowhere.
 */
export function checkUnusedExports(
  root: string,
  packages: readonly WorkspacePackage[],
  apis: ReadonlyMap<string, PackageApi>,
  publicApi: readonly PublicApiEntry[],
): string[] {
  const imported = importedNames(root, packages)
  const failures: string[] = []
  for (const pkg of packages) {
    const api = apis.get(pkg.name)
    if (!api || !pkg.entry) continue
    const used = imported.get(pkg.name) ?? new Set<string>()
    if (used.has(WHOLE_ENTRY)) continue
    const kept = publicNames(publicApi, pkg.name)
    if (kept === WHOLE_ENTRY) continue
    for (const symbol of api.symbols) {
      if (PLUGIN_EXPORTS.has(symbol.name) || used.has(symbol.name) || kept.has(symbol.name)) continue
      failures.push(
        `${pkg.entry}: exports ${symbol.name}, which nothing outside ${pkg.name} imports; move it behind ./internal, drop it, ` +
          'or list it with why in scripts/docs/public-api.ts',
      )
    }
  }
  for (const entry of publicApi) {
    if (!packages.some((pkg) => pkg.name === entry.package)) failures.push(`scripts/docs/public-api.ts: names unknown package ${entry.package}`)
    const symbols = new Set((apis.get(entry.package)?.symbols ?? []).map((symbol) => symbol.name))
    if (entry.names === WHOLE_ENTRY) continue
    for (const name of entry.names) {
      if (!symbols.has(name)) failures.push(`scripts/docs/public-api.ts: ${entry.package} does not export ${name}; remove it from the table`)
    }
  }
  return failures
}

/** The names the public API table keeps for one package. */
function publicNames(publicApi: readonly PublicApiEntry[], name: string): ReadonlySet<string> | typeof WHOLE_ENTRY {
  const entries = publicApi.filter((entry) => entry.package === name)
  if (entries.some((entry) => entry.names === WHOLE_ENTRY)) return WHOLE_ENTRY
  return new Set(entries.flatMap((entry) => entry.names as readonly string[]))
}

/**
 * For each workspace package, the names other places import from its main entry (a bare
 * `import … from 'dsh-x'`, not `dsh-x/internal`). A package's own files do not count.
 */
export function importedNames(root: string, packages: readonly WorkspacePackage[]): Map<string, Set<string>> {
  const byName = new Map(packages.map((pkg) => [pkg.name, pkg]))
  const imported = new Map<string, Set<string>>()
  const note = (specifier: string, name: string, importer: WorkspacePackage | undefined): void => {
    if (!byName.has(specifier) || importer?.name === specifier) return
    const names = imported.get(specifier) ?? new Set<string>()
    names.add(name)
    imported.set(specifier, names)
  }
  const files = [...packages.map((pkg) => pkg.dir), ...CONSUMER_DIRS].flatMap((dir) => typeScriptFiles(root, dir))
  for (const file of files) {
    const importer = packages.find((pkg) => file.startsWith(`${pkg.dir}/`))
    const source = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true)
    for (const [specifier, name] of namedImports(source)) note(specifier, name, importer)
  }
  return imported
}

/** Each `[specifier, imported name]` of a file; `*` stands for a use of the whole entry. */
export function namedImports(source: ts.SourceFile): Array<readonly [string, string]> {
  const found: Array<readonly [string, string]> = []
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const specifier = node.moduleSpecifier.text
      const bindings = node.importClause?.namedBindings
      if (bindings && ts.isNamespaceImport(bindings)) found.push([specifier, WHOLE_ENTRY])
      if (bindings && ts.isNamedImports(bindings)) for (const element of bindings.elements) found.push([specifier, (element.propertyName ?? element.name).text])
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const specifier = node.moduleSpecifier.text
      const clause = node.exportClause
      if (!clause || ts.isNamespaceExport(clause)) found.push([specifier, WHOLE_ENTRY])
      else for (const element of clause.elements) found.push([specifier, (element.propertyName ?? element.name).text])
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments
      if (argument && ts.isStringLiteralLike(argument)) found.push([argument.text, WHOLE_ENTRY])
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      const qualifier = node.qualifier
      const first = qualifier ? (ts.isIdentifier(qualifier) ? qualifier : leftmost(qualifier)) : undefined
      found.push([node.argument.literal.text, first ? first.text : WHOLE_ENTRY])
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** The first identifier of `a.b.c`. */
function leftmost(name: ts.QualifiedName): ts.Identifier {
  let left: ts.EntityName = name
  while (!ts.isIdentifier(left)) left = left.left
  return left
}
