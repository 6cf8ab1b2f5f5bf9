import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createDocsProgram, type PackageApi, packageApi } from '../docs/api-catalog'
import { PUBLIC_API } from '../docs/public-api'
import { checkUnusedExports, type PublicApiEntry } from '../docs/unused-exports'
import { loadWorkspace, repositoryRoot } from '../docs/workspace'

const trees: string[] = []

/** pkg-a exports four names and the plugin's; pkg-b and bench/ import some of them. */
function workspace(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'dsh-unused-exports-'))
  trees.push(root)
  const all: Record<string, string> = {
    'pnpm-workspace.yaml': "packages:\n  - 'packages/*'\n",
    'package.json': JSON.stringify({ name: 'root', private: true }),
    'packages/a/package.json': JSON.stringify({ name: 'pkg-a' }),
    'packages/a/src/index.ts': 'export const used = 1\n',
    'packages/b/package.json': JSON.stringify({ name: 'pkg-b', dependencies: { 'pkg-a': 'workspace:*' } }),
    ...files,
  }
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

/** The API of pkg-a as the catalog would list it (only names matter to the rule). */
function apiOf(names: readonly string[]): Map<string, PackageApi> {
  const symbols = names.map((name) => ({ name, kind: 'const' as const, code: '', file: 'packages/a/src/index.ts', documented: true }))
  return new Map([['pkg-a', { name: 'pkg-a', symbols }]])
}

function check(root: string, names: readonly string[], publicApi: readonly PublicApiEntry[] = []): string[] {
  return checkUnusedExports(root, loadWorkspace(root), apiOf(names), publicApi)
}

afterEach(() => {
  for (const root of trees.splice(0)) rmSync(root, { recursive: true, force: true })
})

describe('every export of a main entry is imported somewhere else', () => {
  it('passes names another package, bench/ or a type import uses, and the plugin exports', () => {
    const root = workspace({
      'packages/b/src/index.ts': "import { used } from 'pkg-a'\nexport { alsoUsed as renamed } from 'pkg-a'\n",
      'bench/row.ts': "import { type Measured } from 'pkg-a'\nlet x: import('pkg-a').Typed.Inner\n",
    })
    expect(check(root, ['used', 'alsoUsed', 'Measured', 'Typed', 'name', 'inject', 'Config', 'apply'])).toEqual([])
  })

  it('fails a name only its own package imports, naming the entry and the way out (a planted violation)', () => {
    const root = workspace({
      'packages/a/test/own.test.ts': "import { lonely } from 'pkg-a'\n",
      'packages/b/src/index.ts': "import { used } from 'pkg-a/internal'\n",
    })
    expect(check(root, ['lonely'])).toEqual([
      'packages/a/src/index.ts: exports lonely, which nothing outside pkg-a imports; move it behind ./internal, drop it, ' +
        'or list it with why in scripts/docs/public-api.ts',
    ])
  })

  it('takes a namespace import or a dynamic import as a use of every name', () => {
    const namespace = workspace({ 'packages/b/test/all.test.ts': "import * as a from 'pkg-a'\n" })
    expect(check(namespace, ['lonely'])).toEqual([])
    const dynamic = workspace({ 'examples/load.ts': "await import('pkg-a')\n" })
    expect(check(dynamic, ['lonely'])).toEqual([])
  })

  it('keeps what the public API table lists, and fails a row whose name or package is gone (planted violations)', () => {
    const root = workspace({})
    expect(check(root, ['documented'], [{ package: 'pkg-a', names: ['documented'], why: 'its README' }])).toEqual([])
    expect(check(root, ['documented'], [{ package: 'pkg-a', names: '*', why: 'its README' }])).toEqual([])
    expect(
      check(
        root,
        ['documented'],
        [
          { package: 'pkg-a', names: ['documented', 'gone'], why: 'its README' },
          { package: 'pkg-z', names: ['x'], why: 'nothing' },
        ],
      ),
    ).toEqual([
      'scripts/docs/public-api.ts: pkg-a does not export gone; remove it from the table',
      'scripts/docs/public-api.ts: names unknown package pkg-z',
      'scripts/docs/public-api.ts: pkg-z does not export x; remove it from the table',
    ])
  })

  it("holds for the repository's packages", () => {
    const root = repositoryRoot()
    const packages = loadWorkspace(root)
    const program = createDocsProgram(
      root,
      packages.flatMap((pkg) => (pkg.entry ? [pkg.entry] : [])),
    )
    const apis = new Map(packages.map((pkg) => [pkg.name, packageApi(program, root, pkg)]))
    expect(checkUnusedExports(root, packages, apis, PUBLIC_API)).toEqual([])
  })
})
