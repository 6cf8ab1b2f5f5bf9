import { posix, relative } from 'node:path'
import ts from 'typescript'
import type { WorkspacePackage } from './workspace'

/**
 * Source imports of workspace packages that the importing package's package.json does not declare.
 * Layers are checked on package.json edges, so an undeclared import would slip past that check.
 * Covers every source file of the program under a package's `src/` (static imports, `export … from`,
 * `import type`, and `import('…')` with a literal specifier).
 */
export function checkDeclaredImports(program: ts.Program, root: string, packages: readonly WorkspacePackage[]): string[] {
  const byName = new Map(packages.map((pkg) => [pkg.name, pkg]))
  const failures: string[] = []
  for (const source of program.getSourceFiles()) {
    const file = relative(root, source.fileName).split('\\').join('/')
    const owner = packages.find((pkg) => file.startsWith(`${pkg.dir}/src/`))
    if (!owner) continue
    const declared = new Set(owner.dependencies.map((dep) => dep.name))
    for (const { specifier } of moduleImports(source)) {
      const name = packageName(specifier)
      if (name === owner.name || !byName.has(name) || declared.has(name)) continue
      failures.push(`${posix.normalize(file)}: imports ${name}, which ${owner.dir}/package.json does not declare`)
    }
  }
  return [...new Set(failures)].sort()
}

/** `dsh-x` of `dsh-x/sub`, `@scope/x` of `@scope/x/sub`. */
export function packageName(specifier: string): string {
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!
}

/** One module a source file names, with the 1-based line of its specifier. */
export interface ModuleImport {
  /** The specifier as written (`dsh-terminal`, `../src/index`, `node:fs`). */
  readonly specifier: string
  /** 1-based line of the specifier, for messages that point at it. */
  readonly line: number
}

/**
 * Every module a file names: static imports, `export … from`, `import type`, `import('…')` with a
 * literal specifier and `import('…')` types. Shared by the src and the test checks so both see the same imports.
 */
export function moduleImports(source: ts.SourceFile): ModuleImport[] {
  const found: ModuleImport[] = []
  const add = (literal: ts.StringLiteralLike): void => {
    found.push({ specifier: literal.text, line: source.getLineAndCharacterOfPosition(literal.getStart(source)).line + 1 })
  }
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier)
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments
      if (argument && ts.isStringLiteralLike(argument)) add(argument)
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}
