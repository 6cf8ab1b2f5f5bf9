import {
  type AppliedTerminalLimits,
  type ForegroundFacts,
  type InspectOptions,
  isSubprocessError,
  SubprocessError,
  type SubprocessTerminalHandle,
  type TerminalExit,
  type TerminalOutputListener,
  validateTerminalFacts,
  validateTerminalSize,
} from 'dsh-subprocess'
import type { ClientTerminal, SessionHostClient } from './client'
import { OutputDelivery } from './output-delivery'

/**
 * What a terminal reports as its exit when the session host was lost before the exit arrived: the
 * session host's death kills every tree it held (its host-death watchdog sends SIGKILL).
 */
const LOST_EXIT: TerminalExit = { exitCode: null, signal: 'SIGKILL' }

/** How a {@link RemoteTerminal} is built: its number on the connection, and what the spawn answered. */
export interface RemoteTerminalOptions {
  /** The connection the terminal lives on. */
  readonly client: SessionHostClient
  /** The session host's number for it on that connection. */
  readonly number: number
  /** The top-level process's pid (in the session host's pid namespace: the same machine). */
  readonly pid: number
  /** The caps in force, as the session host's provider set them. */
  readonly limits: AppliedTerminalLimits
  /** Delivered bytes after which an ack goes at once. */
  readonly ackEveryBytes: number
  /** A listener threw. */
  readonly report: (error: unknown) => void
  /** The terminal was terminated (or lost): the runtime forgets it. */
  readonly forget: (terminal: RemoteTerminal) => void
  /** Spawned durable (or adopted): it stays with the session host when this side hangs up, and has `setFacts`. */
  readonly durable: boolean
  /** Offset of its first byte that will arrive (an adoption's `replayFrom`; 0 for a spawn). */
  readonly from?: number
}

/**
 * A terminal that lives in a session host, behind the same handle contract as an in-process one:
 * first-listener replay, `done` after all output, writes in call order, `TERMINAL_EXITED`, and
 * `SESSION_HOST_LOST` for calls the lost connection could not answer.
 */
export class RemoteTerminal implements SubprocessTerminalHandle, ClientTerminal {
  readonly pid: number
  readonly limits: AppliedTerminalLimits
  readonly done: Promise<TerminalExit>
  /** True for a durable terminal: disposal hangs up on it instead of terminating it. */
  readonly durable: boolean
  /** Present on durable terminals (the seam's contract): stores facts for the next adopter. */
  readonly setFacts?: (facts: string) => void
  readonly #client: SessionHostClient
  readonly #number: number
  readonly #output: OutputDelivery
  readonly #forget: (terminal: RemoteTerminal) => void
  #resolveDone!: (exit: TerminalExit) => void
  #exit: TerminalExit | undefined
  #lost: Error | undefined
  #terminated = false
  #closing: Promise<void> | undefined

  constructor(options: RemoteTerminalOptions) {
    this.pid = options.pid
    this.limits = options.limits
    this.#client = options.client
    this.#number = options.number
    this.#forget = options.forget
    this.#output = new OutputDelivery({
      acknowledge: (offset) => this.#client.acknowledge(this.#number, offset),
      ackEveryBytes: options.ackEveryBytes,
      report: options.report,
      from: options.from ?? 0,
    })
    this.done = new Promise((resolve) => (this.#resolveDone = resolve))
    this.durable = options.durable
    if (options.durable) this.setFacts = (facts) => this.#setFacts(facts)
  }

  /** Fire and forget, ordered with writes (one connection, handled in arrival order); bad facts throw `INVALID_SPEC` here. */
  #setFacts(facts: string): void {
    validateTerminalFacts(facts)
    if (this.#lost || this.#terminated) return
    this.#client.request('setFacts', { terminal: this.#number, facts }).catch(() => {})
  }

  get exit(): TerminalExit | undefined {
    return this.#exit
  }

  output(offset: number, bytes: Buffer): boolean {
    return this.#output.push(offset, bytes)
  }

  exited(exit: TerminalExit): void {
    if (this.#exit) return
    this.#exit = exit
    this.#resolveDone(exit)
    if (this.#terminated) this.#client.detach(this.#number)
  }

  lost(error: Error): void {
    this.#lost = error
    this.exited(LOST_EXIT)
    this.#forget(this)
  }

  onOutput(listener: TerminalOutputListener): () => void {
    return this.#output.subscribe(listener)
  }

  async write(data: string | Uint8Array): Promise<void> {
    if (this.#lost) throw this.#lost
    if (this.#exit || this.#terminated) throw new SubprocessError('TERMINAL_EXITED', `terminal ${this.pid} has exited; input was not written`)
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
    if (bytes.length === 0) return
    // An input frame needs no reply: the session host writes it in order with the requests after it.
    if (this.#client.sendInput(this.#number, bytes)) return
    await this.#client.request('write', { terminal: this.#number, data: bytes.toString('base64') })
  }

  resize(rows: number, cols: number): void {
    validateTerminalSize(rows, cols)
    if (this.#exit || this.#terminated) return
    this.#client.request('resize', { terminal: this.#number, rows, cols }).catch(() => {})
  }

  async inspectForeground(options: InspectOptions = {}): Promise<ForegroundFacts | undefined> {
    if (this.#exit || this.#terminated) return undefined
    try {
      const facts = await this.#client.request('inspectForeground', { terminal: this.#number, options })
      return (facts ?? undefined) as ForegroundFacts | undefined
    } catch {
      return undefined
    }
  }

  async signalForeground(signal: NodeJS.Signals): Promise<number> {
    if (this.#lost) throw this.#lost
    if (this.#terminated) throw new SubprocessError('NO_FOREGROUND_GROUP', `cannot resolve the foreground process group of terminal ${this.pid}; it has exited`)
    return (await this.#client.request('signalForeground', { terminal: this.#number, signal })) as number
  }

  pinShellGroup(processGroupId: number): void {
    if (!Number.isSafeInteger(processGroupId) || processGroupId <= 0) {
      throw new SubprocessError('INVALID_SPEC', `a shell process group must be a positive integer, got ${String(processGroupId)}`)
    }
    if (this.#exit || this.#terminated) return
    this.#client.request('pinShellGroup', { terminal: this.#number, processGroupId }).catch(() => {})
  }

  /**
   * Tear the session down in the session host. After the connection was lost it resolves: the
   * session host's death took the tree down, or, for a link that stopped answering
   * (`TARGET_UNREACHABLE`), the session host ends the connection's terminals (detaches the durable
   * ones) once it notices the link is gone. A call pending at that moment rejects with the loss.
   */
  terminate(): Promise<void> {
    if (this.#terminated || this.#lost) return Promise.resolve()
    this.#closing ??= this.#client.request('terminate', { terminal: this.#number }).then(
      () => {
        this.#terminated = true
        // The exit came before the reply (the session host sends it first); until then it still routes.
        if (this.#exit) this.#client.detach(this.#number)
        this.#forget(this)
      },
      (error: unknown) => {
        this.#closing = undefined
        // Terminated already by another path of the session host: nothing is left to do.
        if (!isSubprocessError(error) && (error as { code?: string }).code === 'UNKNOWN_TERMINAL') return
        throw error
      },
    )
    return this.#closing
  }
}
