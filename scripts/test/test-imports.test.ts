import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { checkTestImports } from '../docs/test-imports'
import { loadWorkspace, repositoryRoot } from '../docs/workspace'

/** Imports every rule allows: own files, builtins, itself, a declared sibling, shared root tooling. */
const CORRECT_TEST = `import { readFileSync } from 'node:fs'
import path from 'path'
import { describe, it } from 'vitest'
import * as self from 'pkg-a'
import { helper } from 'pkg-b/helpers'
import type { Thing } from '../src/index'
import { local } from './support/local'
`

const trees: string[] = []

/** A two-package workspace in a temp folder: pkg-a declares pkg-b in devDependencies, pkg-c it does not. */
function workspace(testFiles: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'dsh-test-imports-'))
  trees.push(root)
  const files: Record<string, string> = {
    'pnpm-workspace.yaml': "packages:\n  - 'packages/*'\n",
    'package.json': JSON.stringify({ name: 'root', private: true, devDependencies: { vitest: '4.1.12', 'pkg-c': 'workspace:*' } }),
    'packages/a/package.json': JSON.stringify({ name: 'pkg-a', dependencies: { zod: '^4' }, devDependencies: { 'pkg-b': 'workspace:*' } }),
    'packages/b/package.json': JSON.stringify({ name: 'pkg-b' }),
    'packages/c/package.json': JSON.stringify({ name: 'pkg-c' }),
    ...testFiles,
  }
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

function check(root: string): string[] {
  return checkTestImports(root, loadWorkspace(root))
}

afterEach(() => {
  for (const root of trees.splice(0)) rmSync(root, { recursive: true, force: true })
})

describe('test files import only what their package declares', () => {
  it('passes a test file whose imports stay inside the package or are declared', () => {
    expect(check(workspace({ 'packages/a/test/ok.test.ts': CORRECT_TEST, 'packages/a/test/support/local.ts': 'export const local = 1\n' }))).toEqual([])
  })

  it('fails a relative import that leaves the package, naming file and line (a planted violation)', () => {
    const root = workspace({ 'packages/a/test/support/stack.ts': "import { x } from '../local'\nexport * as b from '../../../b/src/index'\n" })
    expect(check(root)).toEqual([
      "packages/a/test/support/stack.ts:2: imports '../../../b/src/index', which leaves packages/a; import another package by its name, declared in packages/a/package.json devDependencies",
    ])
  })

  it('fails an undeclared package import, workspace or not, naming file and line (a planted violation)', () => {
    const root = workspace({
      'packages/a/test/undeclared.test.ts': "import { it } from 'vitest'\nimport { c } from 'pkg-c'\nconst pad = await import('left-pad')\n",
    })
    // pkg-c is declared only by the root: a workspace package must be declared by the package itself.
    expect(check(root)).toEqual([
      'packages/a/test/undeclared.test.ts:2: imports pkg-c, which packages/a/package.json does not declare; add it to devDependencies',
      'packages/a/test/undeclared.test.ts:3: imports left-pad, which packages/a/package.json does not declare; add it to devDependencies',
    ])
  })

  it("holds for the repository's own tests", () => {
    const root = repositoryRoot()
    expect(check(root)).toEqual([])
  })
})
