import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { WorkspacePackage } from './workspace'

/** Zod 4 wrappers whose `def.innerType` (or, for pipes, `def.in`) holds the schema a config is read with. */
const WRAPPERS = new Set(['prefault', 'default', 'optional', 'nullable', 'readonly', 'catch', 'nonoptional'])

interface ZodLike {
  readonly _zod?: { readonly def?: { readonly type?: string; readonly innerType?: unknown; readonly in?: unknown; readonly shape?: object } }
}

/**
 * The top-level field names of a zod 4 object schema, looking through defaults, prefaults,
 * optionals and pipes; throws when the schema is not (a wrapper of) an object.
 */
export function configFields(schema: unknown): string[] {
  let current = schema as ZodLike | undefined
  for (let depth = 0; depth < 16 && current; depth++) {
    const def = current._zod?.def
    if (!def) break
    if (def.type === 'object') return Object.keys(def.shape ?? {})
    if (def.type && WRAPPERS.has(def.type)) current = def.innerType as ZodLike
    else if (def.type === 'pipe') current = def.in as ZodLike
    else throw new Error(`Config is a zod ${def.type}, not an object`)
  }
  throw new Error('Config is not a zod schema')
}

/** Backticked names in the first column of the tables under a README's `Config`/`Configuration` heading. */
export function readmeConfigKeys(readme: string): { found: boolean; keys: Set<string> } {
  const keys = new Set<string>()
  let level = 0
  let found = false
  for (const line of readme.split('\n')) {
    const heading = /^(#{1,6})\s+(.*)$/.exec(line)
    if (heading) {
      const depth = heading[1]!.length
      if (level > 0 && depth <= level) level = 0
      if (level === 0 && /^config(uration)?\b/i.test(heading[2]!.trim())) {
        level = depth
        found = true
      }
      continue
    }
    if (level === 0 || !line.startsWith('|')) continue
    const firstCell = line.split('|')[1] ?? ''
    for (const match of firstCell.matchAll(/`([^`]+)`/g)) keys.add(match[1]!)
  }
  return { found, keys }
}

/**
 * For every package whose entry exports `Config`, import the entry (this process must run under
 * tsx with `--conditions=dsh-source`), read the schema's fields and require each in the README's config
 * table. Returns one message per package that misses something (or cannot be checked); the fields
 * read are left in `fieldsByPackage` for the composition check.
 */
export async function checkReadmeConfigs(
  root: string,
  packages: readonly WorkspacePackage[],
  exporting: ReadonlySet<string>,
  fieldsByPackage = new Map<string, string[]>(),
): Promise<string[]> {
  const failures: string[] = []
  for (const pkg of packages) {
    if (!exporting.has(pkg.name) || !pkg.entry) continue
    let fields: string[]
    try {
      const module = (await import(pathToFileURL(join(root, pkg.entry)).href)) as { Config?: unknown }
      fields = configFields(module.Config)
    } catch (error) {
      failures.push(`${pkg.entry}: cannot read Config: ${error instanceof Error ? error.message : String(error)}`)
      continue
    }
    fieldsByPackage.set(pkg.name, fields)
    if (fields.length === 0) continue
    if (!pkg.readme) {
      failures.push(`${pkg.dir}/README.md: missing; ${pkg.name} has config fields ${fields.map((f) => `\`${f}\``).join(', ')}`)
      continue
    }
    const { found, keys } = readmeConfigKeys(readFileSync(join(root, pkg.readme), 'utf8'))
    const missing = fields.filter((field) => !keys.has(field))
    if (!found) failures.push(`${pkg.readme}: no "Config" or "Configuration" section; the schema has ${fields.map((f) => `\`${f}\``).join(', ')}`)
    else if (missing.length > 0)
      failures.push(`${pkg.readme}: the config table misses ${missing.map((f) => `\`${f}\``).join(', ')} (fields of ${pkg.name}'s Config)`)
  }
  return failures
}
