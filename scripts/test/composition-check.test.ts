import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { checkCompositionConfig, compositionEntries } from '../docs/composition-check'
import { configFields } from '../docs/config-check'
import { loadWorkspace, repositoryRoot } from '../docs/workspace'

const SAMPLE = `# a composition
- id: agents
  name: dsh-agent

- id: terminals
  name: dsh-terminal   # the registry
  config:
    maxSessionsPerAgent: 16
    # maxTextBytes: 65536
    nested:
      deep: 1
- id: other
  name: some-package
`

const FIELDS: Record<string, string[]> = { 'dsh-terminal': ['maxSessionsPerAgent', 'maxTextBytes', 'humanActiveMs'], 'dsh-agent': [] }

describe('the composition shows every config field', () => {
  it('reads entries, their package and the keys of their config block, commented ones included', () => {
    expect(compositionEntries(SAMPLE).map((entry) => ({ ...entry, keys: [...entry.keys] }))).toEqual([
      { id: 'agents', name: 'dsh-agent', line: 2, keys: [] },
      { id: 'terminals', name: 'dsh-terminal', line: 5, keys: ['maxSessionsPerAgent', 'maxTextBytes', 'nested'] },
      { id: 'other', name: 'some-package', line: 12, keys: [] },
    ])
  })

  it('fails an entry that leaves a field out, naming the field and the line (a planted violation)', () => {
    expect(checkCompositionConfig('cordis.yml', SAMPLE, (name) => FIELDS[name])).toEqual([
      'cordis.yml:5: entry "terminals" (dsh-terminal) does not show `humanActiveMs`; write each under `config:` with its default ' +
        '(as a `# key: default` comment when the composition keeps the default)',
    ])
    const fixed = SAMPLE.replace('    # maxTextBytes: 65536\n', '    # maxTextBytes: 65536\n    humanActiveMs: 5000\n')
    expect(checkCompositionConfig('cordis.yml', fixed, (name) => FIELDS[name])).toEqual([])
  })

  it("holds for the repository's cordis.yml against every package's real Config", async () => {
    const root = repositoryRoot()
    const text = readFileSync(join(root, 'cordis.yml'), 'utf8')
    const names = new Set(compositionEntries(text).map((entry) => entry.name))
    const fields = new Map<string, string[]>()
    for (const pkg of loadWorkspace(root)) {
      if (!names.has(pkg.name) || !pkg.entry) continue
      const module = (await import(pathToFileURL(join(root, pkg.entry)).href)) as { Config?: unknown }
      if (module.Config) fields.set(pkg.name, configFields(module.Config))
    }
    expect(fields.size).toBeGreaterThan(5)
    expect(fields.get('dsh-terminal-bash')).toContain('shellArgs')
    expect(checkCompositionConfig('cordis.yml', text, (name) => fields.get(name))).toEqual([])
    // Dropping any one shown key of an entry makes the check fail.
    const withoutCancelGrace = text.replace(/^ {4}cancelGraceMs:.*\n/m, '')
    expect(checkCompositionConfig('cordis.yml', withoutCancelGrace, (name) => fields.get(name))).toEqual([expect.stringContaining('`cancelGraceMs`')])
  })
})
