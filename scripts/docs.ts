/**
 * Docs that stay true. `pnpm docs:gen` regenerates every generated section of docs/**\/*.md;
 * `pnpm docs:check` regenerates them in memory and fails (exit 1) when a page is stale, when a
 * package README's config table misses a field of the package's zod `Config`, or when a package
 * breaks the rules of the house (layers, declared imports of src and of tests, an export nothing
 * outside its package imports).
 *
 *   tsx --conditions=dsh-source scripts/docs.ts gen|check
 *
 * Generated sections sit between `<!-- BEGIN GENERATED <name>[: args] -->` and
 * `<!-- END GENERATED <name> -->`: `deps` (dependency diagram and layer table),
 * `api: <package> …` (the exported API of the named packages) and `send-table` (the shell
 * backend's send state machine, from its transition table). Pages are docs/ and .agents/notes/.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createDocsProgram, type PackageApi, packageApi } from './docs/api-catalog'
import { checkCompositionConfig } from './docs/composition-check'
import { checkReadmeConfigs } from './docs/config-check'
import { readmeTemplateProblems } from './docs/readme-template'
import { describeDiff } from './docs/diff'
import { checkDeclaredImports } from './docs/imports'
import { checkLayers } from './docs/layers'
import { PUBLIC_API } from './docs/public-api'
import { checkTestImports } from './docs/test-imports'
import { checkUnusedExports } from './docs/unused-exports'
import { findBlocks, spliceBlocks } from './docs/markers'
import { renderApiBlock, renderDepsBlock } from './docs/render'
import { renderSendTable } from 'dsh-terminal-bash/internal'
import { compareText, loadWorkspace, repositoryRoot, type WorkspacePackage } from './docs/workspace'

/** One page with its text on disk and as regenerated. */
export interface PageResult {
  /** Repository-relative path. */
  readonly path: string
  /** Text on disk. */
  readonly actual: string
  /** Text with every generated section regenerated. */
  readonly expected: string
}

/** Everything one run found: the regenerated pages and every rule that failed. */
export interface DocsRun {
  readonly pages: readonly PageResult[]
  readonly failures: readonly string[]
}

/** Markdown files under `docs/`, repository-relative, sorted. */
function docPages(root: string, dir = 'docs'): string[] {
  if (!existsSync(join(root, dir))) return []
  return readdirSync(join(root, dir), { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? docPages(root, `${dir}/${entry.name}`) : entry.name.endsWith('.md') ? [`${dir}/${entry.name}`] : []))
    .sort(compareText)
}

/**
 * Regenerate every page in memory and run every check. Nothing is written; the caller decides
 * (gen writes the pages, check compares them).
 */
export async function runDocs(root: string): Promise<DocsRun> {
  const failures: string[] = []
  const packages = loadWorkspace(root)
  const byName = new Map<string, WorkspacePackage>(packages.map((pkg) => [pkg.name, pkg]))
  failures.push(...checkLayers(packages))

  const program = createDocsProgram(
    root,
    packages.flatMap((pkg) => (pkg.entry ? [pkg.entry] : [])),
  )
  failures.push(...checkDeclaredImports(program, root, packages))
  failures.push(...checkTestImports(root, packages))
  const apis = new Map<string, PackageApi>(packages.map((pkg) => [pkg.name, packageApi(program, root, pkg)]))
  failures.push(...checkUnusedExports(root, packages, apis, PUBLIC_API))

  const pages = [...docPages(root), ...docPages(root, '.agents/notes')].map((path) => ({ path, actual: readFileSync(join(root, path), 'utf8') }))
  // The subsystem page of a package is the page whose api section names it (the first, in path order).
  const subsystemPages = new Map<string, string>()
  for (const page of pages) {
    let blocks: ReturnType<typeof findBlocks> = []
    try {
      blocks = findBlocks(page.actual)
    } catch (error) {
      failures.push(`${page.path}: ${(error as Error).message}`)
    }
    for (const block of blocks) {
      if (block.name !== 'api') continue
      for (const name of block.args) if (!subsystemPages.has(name)) subsystemPages.set(name, page.path)
    }
  }

  const results: PageResult[] = []
  for (const page of pages) {
    let expected = page.actual
    try {
      expected = spliceBlocks(page.actual, (block) => {
        if (block.name === 'deps') return renderDepsBlock(page.path, packages, subsystemPages)
        if (block.name === 'api') {
          const unknown = block.args.filter((name) => !byName.has(name))
          if (unknown.length > 0) failures.push(`${page.path}:${block.line}: api section names unknown packages ${unknown.join(', ')}`)
          if (block.args.length === 0) failures.push(`${page.path}:${block.line}: api section names no package`)
          const named = block.args.flatMap((name) => (apis.has(name) ? [apis.get(name)!] : []))
          return renderApiBlock(page.path, named, byName)
        }
        if (block.name === 'send-table') return `${renderSendTable()}\n`
        failures.push(`${page.path}:${block.line}: unknown generated section "${block.name}"`)
        return ''
      })
    } catch {
      // Already reported by findBlocks above.
    }
    results.push({ path: page.path, actual: page.actual, expected })
  }

  const exportingConfig = new Set([...apis.values()].filter((api) => api.symbols.some((symbol) => symbol.name === 'Config')).map((api) => api.name))
  const fieldsByPackage = new Map<string, string[]>()
  failures.push(...(await checkReadmeConfigs(root, packages, exportingConfig, fieldsByPackage)))
  for (const pkg of packages) {
    if (!pkg.readme) {
      failures.push(`${pkg.dir}/README.md: missing; every package has one (scripts/scaffold-package.mjs writes the template)`)
      continue
    }
    const symbols = apis.get(pkg.name)?.symbols ?? []
    const hasConfig = (fieldsByPackage.get(pkg.name)?.length ?? 0) > 0
    const expected = { name: pkg.name, hasConfig, hasErrors: symbols.some((symbol) => /Error$/.test(symbol.name)) }
    for (const problem of readmeTemplateProblems(readFileSync(join(root, pkg.readme), 'utf8'), expected)) failures.push(`${pkg.readme}: ${problem}`)
  }
  failures.push(...checkCompositionConfig('cordis.yml', readFileSync(join(root, 'cordis.yml'), 'utf8'), (name) => fieldsByPackage.get(name)))
  return { pages: results, failures }
}

/** Entry point: `gen` writes stale pages, `check` reports them; both exit 1 on any failure. */
async function main(): Promise<void> {
  const mode = process.argv[2]
  if (mode !== 'gen' && mode !== 'check') {
    process.stderr.write('usage: tsx --conditions=dsh-source scripts/docs.ts gen|check\n')
    process.exit(2)
  }
  const root = repositoryRoot()
  const run = await runDocs(root)
  const stale = run.pages.filter((page) => page.actual !== page.expected)
  const problems = [...run.failures]
  for (const page of stale) {
    if (mode === 'gen') {
      writeFileSync(join(root, page.path), page.expected)
      process.stdout.write(`updated ${page.path}\n`)
    } else {
      problems.push(`${page.path} is stale; run \`pnpm docs:gen\`:\n${describeDiff(page.path, page.actual, page.expected)}`)
    }
  }
  if (problems.length > 0) {
    process.stderr.write(`docs:${mode} failed:\n\n${problems.map((problem) => `✗ ${problem}`).join('\n\n')}\n`)
    process.exit(1)
  }
  process.stdout.write(
    `docs:${mode}: ${run.pages.length} pages ${mode === 'gen' && stale.length > 0 ? 'regenerated' : 'up to date'}; layers, imports and README config tables hold\n`,
  )
  // Imported plugin modules may keep handles open (node-pty, timers); the run is complete.
  process.exit(0)
}

await main()
