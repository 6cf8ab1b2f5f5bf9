import { existsSync, readdirSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

/** The repository root: paths resolve from this file, not from the directory vitest runs in. */
const ROOT = fileURLToPath(new URL('.', import.meta.url))

/** Every workspace package (a folder under packages/ with a package.json) becomes one vitest project. */
function packageDirs(dir = 'packages'): string[] {
  if (existsSync(join(ROOT, dir, 'package.json'))) return [dir]
  return readdirSync(join(ROOT, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name !== 'node_modules')
    .flatMap((entry) => packageDirs(join(dir, entry.name)))
}

/**
 * The packages to test. Vitest finds this file by walking up, so `pnpm vitest run` inside a package
 * folder lands here too: it then tests the packages at or under that folder; elsewhere, all of them.
 */
function selectedDirs(): string[] {
  const all = packageDirs()
  const here = relative(ROOT, process.cwd())
  const within = all.filter((dir) => here === dir || here.startsWith(`${dir}${sep}`) || dir.startsWith(`${here}${sep}`))
  return here && within.length ? within : all
}

export default defineConfig({
  root: ROOT,
  resolve: { conditions: ['dsh-source'] },
  ssr: { resolve: { conditions: ['dsh-source'], externalConditions: ['dsh-source'] } },
  test: {
    server: { deps: { inline: [/@deepseek-ai\/cordis-plugin-(loader|include)/] } },
    // Sandboxed sessions' private homes go to a temporary state directory, not the real ~/.local/state.
    globalSetup: [join(ROOT, 'scripts/vitest-state-home.ts')],
    projects: [
      ...selectedDirs().map((dir) => ({
        extends: true as const,
        test: {
          name: relative('packages', dir),
          include: [`${dir}/test/**/*.test.ts`],
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      })),
      // The repository's own checks (docs:check rules), tested with planted violations; only from the root.
      ...(relative(ROOT, process.cwd()) === ''
        ? [{ extends: true as const, test: { name: 'scripts', include: ['scripts/test/**/*.test.ts'], testTimeout: 60_000 } }]
        : []),
    ],
  },
})
