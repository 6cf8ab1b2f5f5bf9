import { existsSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { defineConfig } from 'vitest/config'

/** Every workspace package (a folder under packages/ with a package.json) becomes one vitest project. */
function packageDirs(dir = 'packages'): string[] {
  if (existsSync(join(dir, 'package.json'))) return [dir]
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name !== 'node_modules')
    .flatMap((entry) => packageDirs(join(dir, entry.name)))
}

export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'], externalConditions: ['source'] } },
  test: {
    server: { deps: { inline: [/@deepseek-ai\/cordis-plugin-(loader|include)/] } },
    projects: packageDirs().map((dir) => ({
      extends: true,
      test: {
        name: relative('packages', dir),
        include: [`${dir}/test/**/*.test.ts`],
        testTimeout: 30_000,
        hookTimeout: 30_000,
      },
    })),
  },
})
