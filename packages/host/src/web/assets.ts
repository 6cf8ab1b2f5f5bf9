import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

/** A static file of `@xterm/xterm` the page loads from our own server (no network requests leave the machine). */
export interface XtermAsset {
  readonly type: string
  readonly body: Buffer
}

/** URL path → file inside the `@xterm/xterm` package. */
const FILES: Readonly<Record<string, { file: string; type: string }>> = {
  '/assets/xterm.js': { file: 'lib/xterm.js', type: 'text/javascript; charset=utf-8' },
  '/assets/xterm.css': { file: 'css/xterm.css', type: 'text/css; charset=utf-8' },
}

/**
 * Serves xterm.js and its stylesheet from the installed package, found through module resolution
 * from this file, so it works from sources, from `dist` and from the published package alike.
 */
export class XtermAssets {
  readonly #root = dirname(createRequire(import.meta.url).resolve('@xterm/xterm/package.json'))
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
      cached = readFile(join(this.#root, spec.file)).then((body) => ({ type: spec.type, body }))
      cached.catch(() => this.#cache.delete(path))
      this.#cache.set(path, cached)
    }
    return cached
  }
}
