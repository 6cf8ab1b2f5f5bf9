/**
 * The root `cordis.yml` is where a user learns what can be configured: every entry shows every field
 * of its package's `Config`, set or as a comment (`# key: default`). A field added to a schema
 * without a line here fails `docs:check`.
 */

/** One entry of a composition file as this check reads it. */
export interface CompositionEntry {
  /** The entry's `id`. */
  readonly id: string
  /** The package it mounts (`name`). */
  readonly name: string
  /** 1-based line of its `- id:`. */
  readonly line: number
  /** Config keys shown in its `config:` block, set or commented out. */
  readonly keys: ReadonlySet<string>
}

/**
 * Read the entries of a composition in the loader's list format (`- id:`, `  name:`, `  config:`
 * with keys indented four spaces). A commented key (`    # key: …`) counts as shown.
 */
export function compositionEntries(text: string): CompositionEntry[] {
  const entries: { id: string; name: string; line: number; keys: Set<string> }[] = []
  let inConfig = false
  text.split('\n').forEach((raw, index) => {
    const start = /^- id:\s*(\S+)/.exec(raw)
    if (start) {
      entries.push({ id: start[1]!, name: '', line: index + 1, keys: new Set() })
      inConfig = false
      return
    }
    const entry = entries.at(-1)
    if (!entry) return
    const field = /^ {2}(\w+):\s*(.*)$/.exec(raw)
    if (field) {
      if (field[1] === 'name') entry.name = field[2]!.replace(/\s+#.*$/, '').trim()
      inConfig = field[1] === 'config'
      return
    }
    const key = inConfig ? /^ {4}(?:#\s*)?([A-Za-z][A-Za-z0-9]*):/.exec(raw) : null
    if (key) entry.keys.add(key[1]!)
  })
  return entries
}

/**
 * One message per entry whose package has config fields the composition does not show
 * (`fieldsOf` answers a package's `Config` fields, or `undefined` for a package it does not know).
 */
export function checkCompositionConfig(path: string, text: string, fieldsOf: (name: string) => readonly string[] | undefined): string[] {
  const failures: string[] = []
  for (const entry of compositionEntries(text)) {
    const fields = fieldsOf(entry.name)
    if (!fields) continue
    const missing = fields.filter((field) => !entry.keys.has(field))
    if (missing.length > 0) {
      failures.push(
        `${path}:${entry.line}: entry "${entry.id}" (${entry.name}) does not show ${missing.map((field) => `\`${field}\``).join(', ')}; ` +
          'write each under `config:` with its default (as a `# key: default` comment when the composition keeps the default)',
      )
    }
  }
  return failures
}
