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
 * The host's egress proxies, one per sandbox: no session can use up another's connections, and a
 * proxy ends with its sandbox (its forwarder's hold closes) or, for a confined argv never spawned,
 * after `HOLD_WAIT_MS`. Each lives in a private directory under the host runtime parent, which
 * every sandbox covers, so no sandbox reaches a proxy it was not given.
 */
export class EgressProxies {
  readonly #runtimeParent: () => string
  readonly #fixedAddresses: FixedAddresses
  readonly #onRefused: (refusal: EgressRefusal) => void
  readonly #perl: () => string
  readonly #live = new Set<EgressProxy>()
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

  /** Start a proxy for one sandbox that connects only to `allowedHosts`; resolves with its directory. */
  async open(allowedHosts: readonly string[]): Promise<EgressDirectory> {
    if (this.#closed) throw new Error('the egress proxies are closed')
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
        onClosed: () => {
          this.#live.delete(proxy)
          rmSync(path, { recursive: true, force: true })
        },
      })
      this.#live.add(proxy)
      return { path }
    } catch (error) {
      rmSync(path, { recursive: true, force: true })
      throw error
    }
  }

  /** How many proxies are alive (sandboxes holding one, or starts not spawned yet); for tests. */
  get size(): number {
    return this.#live.size
  }

  /** Stop every proxy and remove its directory. */
  async close(): Promise<void> {
    this.#closed = true
    await Promise.all([...this.#live].map((proxy) => proxy.close()))
  }
}
