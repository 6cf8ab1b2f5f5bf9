import { fileURLToPath } from 'node:url'

/**
 * This package's folder (the one with package.json): one level above this module, which holds both
 * from `src/` and from the bundled `dist/`; keep this file at the top of `src/`, like version.ts.
 */
export const PACKAGE_ROOT: string = fileURLToPath(new URL('..', import.meta.url))
