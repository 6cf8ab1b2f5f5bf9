import type { Context } from '@deepseek-ai/cordis'
import type { AdoptedTerminal, DetachedTerminal, SubprocessTerminalHandle, TerminalSpawnSpec } from 'dsh-subprocess'
import { SubprocessError } from 'dsh-subprocess'
import * as localPlugin from 'dsh-subprocess-local'
import { LocalSubprocessRuntime } from 'dsh-subprocess-local/internal'

/**
 * The durable side of the seam (`durable` spawns, `setFacts`, `listDetached`, `adoptTerminal`) over
 * real dsh-subprocess-local terminals, for testing the backend against the declared contract before
 * a session host of protocol v2 exists: every stack mounting {@link DurableLab.plugin} is one "host
 * process"; {@link DurableLab.crash} cuts one off as a SIGKILL would (its handles go inert, its
 * terminals stay, detached). Replay is the whole output from offset 0 (nothing dropped).
 */
export class DurableLab {
  readonly #terminals = new Map<string, LabTerminal>()

  /** A provider plugin for one host process named `client`. */
  plugin(client: string) {
    const lab = this
    return {
      name: `durable-lab-${client}`,
      apply(ctx: Context) {
        void new (class extends LocalSubprocessRuntime {
          override async spawnTerminal(spec: TerminalSpawnSpec): Promise<SubprocessTerminalHandle> {
            const { durable, ...local } = spec
            const real = await super.spawnTerminal(local)
            if (!durable) return real
            const terminal = new LabTerminal(real)
            lab.#terminals.set(durable.key, terminal)
            return terminal.attach(client)
          }
          override async listDetached(): Promise<readonly DetachedTerminal[]> {
            return lab.#list()
          }
          override async adoptTerminal(key: string): Promise<AdoptedTerminal> {
            return lab.#adopt(key, client)
          }
        })(ctx, localPlugin.Config.parse({}))
      },
    }
  }

  /** Host process `client` is gone: its terminals are detached, its handles do nothing from now on. */
  crash(client: string): void {
    for (const terminal of this.#terminals.values()) if (terminal.client === client) terminal.detach()
  }

  #list(): DetachedTerminal[] {
    const found: DetachedTerminal[] = []
    for (const [key, terminal] of this.#terminals) {
      if (terminal.client !== undefined || terminal.detachedAt === undefined) continue
      const exit = terminal.real.exit
      found.push({
        key,
        pid: terminal.real.pid,
        detachedAt: terminal.detachedAt,
        facts: terminal.facts,
        outputBytes: terminal.bytes,
        ...(exit ? { exit } : {}),
      })
    }
    return found
  }

  #adopt(key: string, client: string): AdoptedTerminal {
    const terminal = this.#terminals.get(key)
    if (terminal?.client !== undefined) throw new SubprocessError('TERMINAL_ADOPTED', `terminal ${key} was adopted first`)
    if (!terminal || terminal.detachedAt === undefined) throw new SubprocessError('TERMINAL_NOT_FOUND', `no detached terminal ${key}`)
    return { handle: terminal.attach(client), facts: terminal.facts, replayFrom: 0 }
  }
}

/** One real terminal, its whole output so far, its facts, and the client handle in use. */
class LabTerminal {
  readonly #chunks: Buffer[] = []
  readonly #listeners = new Set<(chunk: Buffer) => void>()
  bytes = 0
  facts = ''
  client: string | undefined
  detachedAt: number | undefined
  #generation = 0

  constructor(readonly real: SubprocessTerminalHandle) {
    real.onOutput((chunk) => {
      this.#chunks.push(chunk)
      this.bytes += chunk.length
      for (const listener of this.#listeners) listener(chunk)
    })
  }

  detach(): void {
    this.client = undefined
    this.detachedAt = Date.now()
    this.#generation++
    this.#listeners.clear()
  }

  /** A handle for `client`: its first listener gets the whole output so far, then what follows. */
  attach(client: string): SubprocessTerminalHandle {
    this.client = client
    this.detachedAt = undefined
    const generation = ++this.#generation
    const live = () => this.#generation === generation
    const real = this.real
    let first = true
    const terminal = this
    return {
      pid: real.pid,
      limits: real.limits,
      get exit() {
        return real.exit
      },
      done: real.done,
      onOutput(listener) {
        if (!live()) return () => {}
        if (first) for (const chunk of terminal.#chunks) listener(chunk)
        first = false
        terminal.#listeners.add(listener)
        return () => terminal.#listeners.delete(listener)
      },
      write: (data) => (live() ? real.write(data) : Promise.resolve()),
      resize: (rows, cols) => (live() ? real.resize(rows, cols) : undefined),
      inspectForeground: (options) => real.inspectForeground(options),
      signalForeground: (signal) => real.signalForeground(signal),
      pinShellGroup: (group) => real.pinShellGroup(group),
      terminate: () => (live() ? real.terminate() : Promise.resolve()),
      setFacts: (facts) => {
        if (live()) terminal.facts = facts
      },
    }
  }
}
