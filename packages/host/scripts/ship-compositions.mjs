// Part of `build`: copy the repository's default composition and its overlays into
// dist/compositions/, keeping their relative layout (the overlays include ../cordis.yml), so an
// installed dsh-terminal-mcp has a composition to serve when the user's directory has none.
// The repository's files stay the only ones to edit; PRESETS in src/compose/config-path.ts names
// the ones `--preset` serves.
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const repository = fileURLToPath(new URL('../../../', import.meta.url))
const target = fileURLToPath(new URL('../dist/compositions/', import.meta.url))
mkdirSync(join(target, 'examples'), { recursive: true })
copyFileSync(join(repository, 'cordis.yml'), join(target, 'cordis.yml'))
for (const file of readdirSync(join(repository, 'examples')).filter((name) => name.endsWith('.yml'))) {
  copyFileSync(join(repository, 'examples', file), join(target, 'examples', file))
}
