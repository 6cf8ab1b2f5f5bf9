import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { readmeTemplateProblems } from '../docs/readme-template'
import { repositoryRoot } from '../docs/workspace'

const FULL = { name: 'dsh-example', hasConfig: true, hasErrors: true }

const GOOD = `# dsh-example

What it is for.

## Use it

Mount it.

\`\`\`md
## Not a heading (inside a code block)
\`\`\`

## Configuration

## Errors (\`ExampleError.code\`)

## Limits: what it cannot do
`

describe('the README template', () => {
  it('accepts a README with the title, a paragraph, Use it first, and the sections the package needs', () => {
    expect(readmeTemplateProblems(GOOD, FULL)).toEqual([])
    // A package without config or error classes needs neither section.
    const plain = GOOD.replace('## Configuration\n\n', '').replace('## Errors (`ExampleError.code`)\n\n', '')
    expect(readmeTemplateProblems(plain, { name: 'dsh-example', hasConfig: false, hasErrors: false })).toEqual([])
  })

  it('names each planted violation', () => {
    expect(readmeTemplateProblems(GOOD.replace('# dsh-example', '# Example'), FULL)).toEqual(['its first line must be the title `# dsh-example`'])
    expect(readmeTemplateProblems(GOOD.replace('What it is for.\n', ''), FULL)).toEqual(['a paragraph saying what the package is for must follow the title'])
    expect(readmeTemplateProblems(GOOD.replace('## Configuration\n', ''), FULL)).toEqual(['it has no `## Configuration` section'])
    expect(readmeTemplateProblems(GOOD.replace('## Errors (`ExampleError.code`)\n', '## Failures\n'), FULL)).toEqual(['it has no `## Errors` section'])
    expect(readmeTemplateProblems(GOOD.replace('## Limits: what it cannot do\n', '## Limitless\n'), FULL)).toEqual(['it has no `## Limits` section'])
    expect(readmeTemplateProblems(GOOD.replace('## Use it', '## Mounting'), FULL)).toEqual([
      'it has no `## Use it` section',
      'its first section must be `## Use it` (it is `## Mounting`)',
    ])
  })

  it('is what the scaffold script writes for a new package', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-scaffold-'))
    try {
      execFileSync('node', [join(repositoryRoot(), 'scripts/scaffold-package.mjs'), join(dir, 'pkg'), 'dsh-example', 'An example.'], { stdio: 'ignore' })
      expect(readmeTemplateProblems(readFileSync(join(dir, 'pkg', 'README.md'), 'utf8'), FULL)).toEqual([])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
