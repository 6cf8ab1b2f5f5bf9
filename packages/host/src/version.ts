import { createRequire } from 'node:module'

/**
 * This package's version, for `initialize` and `--version`. Read from package.json one level up,
 * which holds both from `src/` and from the bundled `dist/`; keep this file at the top of `src/`.
 */
export const HOST_VERSION: string = (createRequire(import.meta.url)('../package.json') as { version: string }).version
