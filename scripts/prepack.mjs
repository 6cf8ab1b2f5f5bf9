// `prepack` of every public package (npm and pnpm run it in the package's folder before packing):
// put the repository's LICENSE into the package, so each tarball carries the licence text.
// The copies are build output (ignored by git); the root LICENSE is the one to edit.
import { copyFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const licence = fileURLToPath(new URL('../LICENSE', import.meta.url))
if (!existsSync(licence)) {
  console.error(`prepack: ${licence} is missing; every tarball must carry the licence`)
  process.exit(1)
}
copyFileSync(licence, join(process.cwd(), 'LICENSE'))
