import { readFileSync } from 'node:fs'
import { join, posix, relative } from 'node:path'
import ts from 'typescript'
import { compareText, type WorkspacePackage } from './workspace'

/** How the catalog groups an export. */
export type ApiKind = 'plugin' | 'class' | 'function' | 'type' | 'const'

/** One exported symbol of a package entry, ready to print. */
export interface ApiSymbol {
  /** The exported name (after any `as` renaming). */
  readonly name: string
  /** Group it is listed under. */
  readonly kind: ApiKind
  /** JSDoc and declaration text (bodies removed), as TypeScript source. */
  readonly code: string
  /** Repository-relative file of its first declaration. */
  readonly file: string
  /** True when its declaration carries a JSDoc comment. */
  readonly documented: boolean
}

/** The exported surface of one package's `src/index.ts`, re-exports followed. */
export interface PackageApi {
  /** Package name. */
  readonly name: string
  /** Symbols sorted by group, then name. */
  readonly symbols: readonly ApiSymbol[]
}

/** Exports that make a module a Cordis plugin; listed first. */
const PLUGIN_EXPORTS = ['name', 'inject', 'Config', 'apply']

/** Group order in the catalog. */
export const KIND_ORDER: readonly ApiKind[] = ['plugin', 'class', 'function', 'type', 'const']

/**
 * A program over the given entry files with the repository's compiler options (tsconfig.base.json,
 * so workspace packages resolve to their sources through the `dsh-source` condition).
 */
export function createDocsProgram(root: string, entries: readonly string[]): ts.Program {
  const configPath = join(root, 'tsconfig.base.json')
  const raw = JSON.parse(readFileSync(configPath, 'utf8')) as { compilerOptions?: object }
  const converted = ts.convertCompilerOptionsFromJson(raw.compilerOptions ?? {}, root, configPath)
  if (converted.errors.length > 0) {
    throw new Error(converted.errors.map((error) => ts.flattenDiagnosticMessageText(error.messageText, '\n')).join('\n'))
  }
  return ts.createProgram({ rootNames: entries.map((entry) => join(root, entry)), options: { ...converted.options, noEmit: true } })
}

/** Collect the exported symbols of a package's entry (empty when it has no `src/index.ts`). */
export function packageApi(program: ts.Program, root: string, pkg: WorkspacePackage): PackageApi {
  const checker = program.getTypeChecker()
  const source = pkg.entry ? program.getSourceFile(join(root, pkg.entry)) : undefined
  const moduleSymbol = source ? checker.getSymbolAtLocation(source) : undefined
  if (!moduleSymbol) return { name: pkg.name, symbols: [] }
  const symbols: ApiSymbol[] = []
  for (const exported of checker.getExportsOfModule(moduleSymbol)) {
    const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
    const declarations = [...(target.declarations ?? [])].sort((a, b) => compareText(a.getSourceFile().fileName, b.getSourceFile().fileName) || a.pos - b.pos)
    const first = declarations[0]
    if (!first) continue
    const file = posix.normalize(relative(root, first.getSourceFile().fileName).split('\\').join('/'))
    const parts: string[] = []
    let documented = false
    for (const declaration of declarations) {
      if (isOverloadImplementation(declaration, declarations)) continue
      const doc = jsDocOf(declaration)
      if (doc) documented = true
      const code = file.startsWith('node_modules/') ? `// re-exported from ${file}` : renderDeclaration(declaration, checker)
      parts.push(doc ? `${doc}\n${code}` : code)
    }
    const kind: ApiKind = PLUGIN_EXPORTS.includes(exported.name) ? 'plugin' : kindOf(first)
    symbols.push({ name: exported.name, kind, code: parts.join('\n\n'), file, documented })
  }
  symbols.sort((a, b) => KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) || compareName(a.name, b.name))
  return { name: pkg.name, symbols }
}

/** Case-insensitive name order with a byte-wise tie-break: stable on every machine. */
function compareName(a: string, b: string): number {
  return compareText(a.toLowerCase(), b.toLowerCase()) || compareText(a, b)
}

function kindOf(declaration: ts.Declaration): ApiKind {
  if (ts.isClassDeclaration(declaration)) return 'class'
  if (ts.isFunctionDeclaration(declaration)) return 'function'
  if (ts.isVariableDeclaration(declaration)) {
    const init = declaration.initializer
    return init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) ? 'function' : 'const'
  }
  return 'type'
}

/** A function or method body that has overload signatures beside it: only the overloads are API. */
function isOverloadImplementation(node: ts.Node, siblings: readonly ts.Node[]): boolean {
  if (!(ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) || !node.body) return false
  return siblings.some((other) => other !== node && other.kind === node.kind && !(other as ts.FunctionLikeDeclaration).body)
}

/** The closest JSDoc block of a declaration, re-indented to start at column 0. */
function jsDocOf(node: ts.Node): string | undefined {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc)
  const doc = docs[docs.length - 1]
  if (!doc) return undefined
  const source = node.getSourceFile()
  const raw = source.text.slice(doc.getStart(source), doc.end)
  return raw
    .split('\n')
    .map((line, index) => (index === 0 ? line.trim() : /^\s*\*/.test(line) ? line.replace(/^\s*\*/, ' *').trimEnd() : ` ${line.trim()}`))
    .join('\n')
}

/** Source text of a node without leading trivia and JSDoc. */
function textOf(node: ts.Node): string {
  const source = node.getSourceFile()
  return source.text.slice(node.getStart(source), node.end)
}

/** Column where a node starts (its own line's indentation). */
function columnOf(node: ts.Node): number {
  const source = node.getSourceFile()
  return source.getLineAndCharacterOfPosition(node.getStart(source)).character
}

/** Remove up to `column` leading spaces from every line after the first. */
function dedent(text: string, column: number): string {
  if (column === 0) return text
  const prefix = new RegExp(`^ {0,${column}}`)
  return text
    .split('\n')
    .map((line, index) => (index === 0 ? line : line.replace(prefix, '')))
    .join('\n')
}

function stripExport(text: string): string {
  return text.replace(/^export\s+(default\s+)?/, '').replace(/^declare\s+/, '')
}

/** Text of a node from its start up to (not including) `end`, trimmed and dedented. */
function head(node: ts.Node, end: number): string {
  const source = node.getSourceFile()
  return dedent(source.text.slice(node.getStart(source), end).trimEnd(), columnOf(node))
}

/** A declared return type, or the checker's inferred one (long types are cut with `...`). */
function returnType(node: ts.SignatureDeclaration, checker: ts.TypeChecker): string {
  if (node.type) return ''
  const signature = checker.getSignatureFromDeclaration(node)
  return signature ? `: ${checker.typeToString(checker.getReturnTypeOfSignature(signature), node)}` : ''
}

/** The declaration as it reads in source, bodies removed and missing types filled in by the checker. */
function renderDeclaration(declaration: ts.Declaration, checker: ts.TypeChecker): string {
  if (ts.isFunctionDeclaration(declaration)) {
    if (!declaration.body) return stripExport(head(declaration, declaration.end)).replace(/;$/, '')
    return stripExport(head(declaration, declaration.body.getStart()) + returnType(declaration, checker))
  }
  if (ts.isClassDeclaration(declaration)) return renderClass(declaration, checker)
  if (ts.isVariableDeclaration(declaration)) return renderVariable(declaration, checker)
  return stripExport(dedent(textOf(declaration), columnOf(declaration))).replace(/;$/, '')
}

function renderVariable(declaration: ts.VariableDeclaration, checker: ts.TypeChecker): string {
  const list = declaration.parent
  const keyword = list.flags & ts.NodeFlags.Const ? 'const' : list.flags & ts.NodeFlags.Let ? 'let' : 'var'
  const name = textOf(declaration.name)
  const column = columnOf(list.parent)
  if (declaration.type) return `${keyword} ${name}: ${dedent(textOf(declaration.type), column)}`
  const init = declaration.initializer
  if (init && isLiteral(init) && textOf(init).length <= 600) return `${keyword} ${name} = ${dedent(textOf(init), column)}`
  return `${keyword} ${name}: ${checker.typeToString(checker.getTypeAtLocation(declaration.name), declaration)}`
}

/** Initializers whose source text is their clearest description: literals, `as const` lists, arithmetic. */
function isLiteral(node: ts.Expression): boolean {
  if (ts.isAsExpression(node) || ts.isSatisfiesExpression(node) || ts.isParenthesizedExpression(node)) return isLiteral(node.expression)
  if (ts.isStringLiteral(node) || ts.isNumericLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return true
  if (node.kind === ts.SyntaxKind.TrueKeyword || node.kind === ts.SyntaxKind.FalseKeyword) return true
  if (ts.isPrefixUnaryExpression(node)) return isLiteral(node.operand)
  if (ts.isBinaryExpression(node)) return isLiteral(node.left) && (isLiteral(node.right) || ts.isIdentifier(node.right))
  if (ts.isTemplateExpression(node)) return node.templateSpans.every((span) => ts.isIdentifier(span.expression))
  if (ts.isArrayLiteralExpression(node)) return node.elements.every((element) => isLiteral(element))
  return false
}

/** `class X extends Y {`, then every public and protected member with its JSDoc, bodies removed. */
function renderClass(declaration: ts.ClassDeclaration, checker: ts.TypeChecker): string {
  const lines = [stripExport(head(declaration, declaration.members.pos))]
  for (const member of declaration.members) {
    if (!isVisibleMember(member) || isOverloadImplementation(member, declaration.members)) continue
    const signature = renderMember(member, checker)
    if (signature === undefined) continue
    const doc = jsDocOf(member)
    const block = doc ? `${doc}\n${signature}` : signature
    if (lines.length > 1) lines.push('')
    lines.push(...block.split('\n').map((line) => (line ? `  ${line}` : line)))
  }
  lines.push('}')
  return lines.join('\n')
}

function isVisibleMember(member: ts.ClassElement): boolean {
  if (ts.isClassStaticBlockDeclaration(member) || ts.isSemicolonClassElement(member)) return false
  if (member.name && ts.isPrivateIdentifier(member.name)) return false
  return !(ts.getCombinedModifierFlags(member as ts.Declaration) & ts.ModifierFlags.Private)
}

function renderMember(member: ts.ClassElement, checker: ts.TypeChecker): string | undefined {
  if (ts.isPropertyDeclaration(member)) {
    const modifiers = (ts.getModifiers(member) ?? []).map((modifier) => textOf(modifier)).join(' ')
    const optional = member.questionToken ? '?' : ''
    const type = member.type ? dedent(textOf(member.type), columnOf(member)) : checker.typeToString(checker.getTypeAtLocation(member), member)
    return `${modifiers ? `${modifiers} ` : ''}${textOf(member.name)}${optional}: ${type}`
  }
  if (ts.isConstructorDeclaration(member) || ts.isMethodDeclaration(member) || ts.isGetAccessorDeclaration(member) || ts.isSetAccessorDeclaration(member)) {
    if (!member.body) return head(member, member.end).replace(/;$/, '')
    const typed = ts.isMethodDeclaration(member) || ts.isGetAccessorDeclaration(member) ? returnType(member, checker) : ''
    return head(member, member.body.getStart()) + typed
  }
  if (ts.isIndexSignatureDeclaration(member)) return head(member, member.end).replace(/;$/, '')
  return undefined
}
