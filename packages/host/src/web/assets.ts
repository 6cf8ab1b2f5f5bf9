import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

/** A static file of `@xterm/xterm` (or its Unicode 11 addon) the page loads from our own server (no network requests leave the machine). */
export interface XtermAsset {
  readonly type: string
  readonly body: Buffer
}

/** URL path → file inside an installed package. */
const FILES: Readonly<Record<string, { pkg: string; file: string; type: string }>> = {
  '/assets/xterm.js': { pkg: '@xterm/xterm', file: 'lib/xterm.js', type: 'text/javascript; charset=utf-8' },
  '/assets/xterm.css': { pkg: '@xterm/xterm', file: 'css/xterm.css', type: 'text/css; charset=utf-8' },
  // The widths the session's own emulator uses (Unicode 11), so the page draws emoji where bash puts them.
  '/assets/addon-unicode11.js': { pkg: '@xterm/addon-unicode11', file: 'lib/addon-unicode11.js', type: 'text/javascript; charset=utf-8' },
}

/**
 * Serves xterm.js, its stylesheet and its Unicode 11 addon from the installed packages, found through
 * module resolution from this file, so it works from sources, from `dist` and from the published package alike.
 */
export class XtermAssets {
  readonly #require = createRequire(import.meta.url)
  readonly #cache = new Map<string, Promise<XtermAsset>>()

  /** Whether `path` names one of the assets. */
  has(path: string): boolean {
    return Object.hasOwn(FILES, path)
  }

  /** The asset at `path` (read once, then kept). */
  get(path: string): Promise<XtermAsset> {
    const spec = FILES[path]
    if (!spec) return Promise.reject(new Error(`no asset ${path}`))
    let cached = this.#cache.get(path)
    if (!cached) {
      cached = this.#read(spec)
      cached.catch(() => this.#cache.delete(path))
      this.#cache.set(path, cached)
    }
    return cached
  }

  async #read(spec: { pkg: string; file: string; type: string }): Promise<XtermAsset> {
    const root = dirname(this.#require.resolve(`${spec.pkg}/package.json`))
    return { type: spec.type, body: await readFile(join(root, spec.file)) }
  }
}
