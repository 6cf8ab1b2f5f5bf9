import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseHostPattern } from 'dsh-sandbox'
import type { FixedAddresses } from './destination'
import { connectHelperScript } from './in-sandbox'
import { EgressProxy, type EgressRefusal } from './proxy'

/** One proxy's directory on the host: its socket and the connect helper, bound into each sandbox it serves. */
export interface EgressDirectory {
  /** The host directory (0700, under the host runtime parent every sandbox hides). */
  readonly path: string
}

/**
 * The host's egress proxies, one per distinct allowlist, started on the first sandbox that needs
 * one and stopped with the provider. Each lives in a private directory under the host runtime
 * parent, which every sandbox covers, so no sandbox reaches a proxy it was not given.
 */
export class EgressProxies {
  readonly #runtimeParent: () => string
  readonly #fixedAddresses: FixedAddresses
  readonly #onRefused: (refusal: EgressRefusal) => void
  readonly #perl: () => string
  readonly #started = new Map<string, Promise<{ proxy: EgressProxy; directory: EgressDirectory }>>()
  #closed = false

  constructor(options: {
    runtimeParent: () => string
    fixedAddresses: FixedAddresses
    onRefused: (refusal: EgressRefusal) => void
    perl: () => string
  }) {
    this.#runtimeParent = options.runtimeParent
    this.#fixedAddresses = options.fixedAddresses
    this.#onRefused = options.onRefused
    this.#perl = options.perl
  }

  /** The directory of the proxy serving `allowedHosts`, started if needed. */
  async directoryFor(allowedHosts: readonly string[]): Promise<EgressDirectory> {
    if (this.#closed) throw new Error('the egress proxies are closed')
    const key = JSON.stringify([...new Set(allowedHosts)].sort())
    let started = this.#started.get(key)
    if (started === undefined) {
      started = this.#start(allowedHosts)
      this.#started.set(key, started)
      // A proxy that failed to start is tried again by the next sandbox.
      started.catch(() => this.#started.delete(key))
    }
    return (await started).directory
  }

  /** Stop every proxy and remove its directory. */
  async close(): Promise<void> {
    this.#closed = true
    const started = [...this.#started.values()]
    this.#started.clear()
    await Promise.all(
      started.map(async (pending) => {
        const { proxy, directory } = await pending.catch(() => ({ proxy: undefined, directory: undefined }))
        await proxy?.close()
        if (directory !== undefined) rmSync(directory.path, { recursive: true, force: true })
      }),
    )
  }

  async #start(allowedHosts: readonly string[]): Promise<{ proxy: EgressProxy; directory: EgressDirectory }> {
    const patterns = allowedHosts.map((entry) => parseHostPattern(entry))
    const path = mkdtempSync(join(this.#runtimeParent(), 'egress-'))
    try {
      chmodSync(path, 0o700)
      writeFileSync(join(path, 'connect'), connectHelperScript(this.#perl()), { mode: 0o755 })
      const proxy = await EgressProxy.start({
        socketPath: join(path, 'proxy.sock'),
        patterns,
        fixedAddresses: this.#fixedAddresses,
        onRefused: this.#onRefused,
      })
      return { proxy, directory: { path } }
    } catch (error) {
      rmSync(path, { recursive: true, force: true })
      throw error
    }
  }
}
