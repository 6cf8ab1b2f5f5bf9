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
import { linkLostDuringCall, targetStillDown } from './errors'
import { OutputDelivery } from './output-delivery'
import { InputLedger } from './input-ledger'
import type { Readopter } from './readoption'

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
  /** A durable terminal's way back after its connection was lost (see {@link Readopter}); absent: a loss ends it. */
  readonly readopter?: Readopter
  /** Input offset of its next byte (an adoption's `inputOffset`; 0 for a spawn): where its ledger starts. */
  readonly inputFrom?: number
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
  #client: SessionHostClient
  #number: number
  readonly #output: OutputDelivery
  readonly #forget: (terminal: RemoteTerminal) => void
  readonly #readopter: Readopter | undefined
  readonly #report: (error: unknown) => void
  /** Set while a durable terminal's connection is lost and it is not adopted again yet: the loss. */
  #suspended: Error | undefined
  /** Facts stored while suspended, sent once adopted again. */
  #unsentFacts: string | undefined
  /** A shell group pinned while suspended, sent once adopted again. */
  #unsentPin: number | undefined
  /** The size last asked for, sent again after a re-adoption when it changed meanwhile. */
  #size: { rows: number; cols: number } | undefined
  #resolveDone!: (exit: TerminalExit) => void
  #exit: TerminalExit | undefined
  #lost: Error | undefined
  #terminated = false
  #closing: Promise<void> | undefined
  /** Told when the link is lost and the terminal lives on (present on re-adoptable terminals). */
  #linkListeners: readonly ((error: Error) => void)[] = []
  /** Input frames sent, kept to resend what a cut lost (re-adoptable terminals only). */
  readonly #ledger: InputLedger | undefined

  constructor(options: RemoteTerminalOptions) {
    this.pid = options.pid
    this.limits = options.limits
    this.#client = options.client
    this.#number = options.number
    this.#forget = options.forget
    this.#readopter = options.readopter
    this.#report = options.report
    this.#ledger = options.readopter ? new InputLedger(options.inputFrom ?? 0) : undefined
    this.#output = new OutputDelivery({
      acknowledge: (offset) => this.#client.acknowledge(this.#number, offset),
      ackEveryBytes: options.ackEveryBytes,
      report: options.report,
      from: options.from ?? 0,
    })
    this.done = new Promise((resolve) => (this.#resolveDone = resolve))
    this.durable = options.durable
    if (options.durable) this.setFacts = (facts) => this.#setFacts(facts)
    if (options.readopter) this.onLinkLost = (listener) => this.#onLinkLost(listener)
  }

  /** Present on terminals adopted again after a loss (see the seam's `onLinkLost`). */
  readonly onLinkLost?: (listener: (error: Error) => void) => () => void

  /** Fire and forget, ordered with writes (one connection, handled in arrival order); bad facts throw `INVALID_SPEC` here. */
  #setFacts(facts: string): void {
    validateTerminalFacts(facts)
    if (this.#lost || this.#terminated) return
    // Stored by the next adoption's rebind: the far side must have the newest facts for a later adopter.
    if (this.#suspended) {
      this.#unsentFacts = facts
      return
    }
    this.#client.request('setFacts', { terminal: this.#number, facts }).catch(() => {})
  }

  #onLinkLost(listener: (error: Error) => void): () => void {
    this.#linkListeners = [...this.#linkListeners, listener]
    return () => {
      this.#linkListeners = this.#linkListeners.filter((other) => other !== listener)
    }
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
    if (this.#readopter && !this.#exit && !this.#terminated && !this.#lost) {
      // Durable: the session host on the far side keeps it; it is adopted again once the link is back.
      this.#suspended = error
      this.#readopter.lost(error, this.#client)
      // Given up at once (the provider is going away): it ended, and `done` tells that.
      if (!this.#suspended) return
      // A call waiting on the terminal (a send) ends now, not by its own timeout: the terminal lives on.
      const told = linkLostDuringCall(error)
      for (const listener of this.#linkListeners) {
        try {
          listener(told)
        } catch (thrown) {
          this.#report(thrown)
        }
      }
      return
    }
    this.#end(error)
  }

  /** The terminal is gone for this side: calls fail with `error`, `done` resolves. */
  #end(error: Error): void {
    this.#suspended = undefined
    this.#lost = error
    this.exited(LOST_EXIT)
    this.#forget(this)
  }

  /**
   * Adopted again on `client` as `number`, the replay starting at `from`: called synchronously when
   * the adopt reply is read, before the replay's frames. Answers the bytes the replay lacked.
   */
  rebind(client: SessionHostClient, number: number, from: number, inputOffset?: number): number {
    // Ended meanwhile (terminated, or given up): nothing to attach again.
    if (this.#lost || this.#terminated) return 0
    this.#client = client
    this.#number = number
    this.#suspended = undefined
    const missing = this.#output.rebase(from)
    client.attach(number, this)
    if (missing > 0) this.#report(new Error(`terminal ${this.pid}: ${missing} bytes of output were dropped on the far side while its link was down`))
    if (inputOffset !== undefined) this.#resendLostInput(inputOffset)
    if (this.#size) client.request('resize', { terminal: number, ...this.#size }).catch(() => {})
    if (this.#unsentFacts !== undefined) client.request('setFacts', { terminal: number, facts: this.#unsentFacts }).catch(() => {})
    this.#unsentFacts = undefined
    if (this.#unsentPin !== undefined) client.request('pinShellGroup', { terminal: number, processGroupId: this.#unsentPin }).catch(() => {})
    this.#unsentPin = undefined
    return missing
  }

  /**
   * Input frames cut off with the link never reached the terminal: the adoption says how many bytes
   * it took, and the rest goes again now, before any later write (once, in order).
   */
  #resendLostInput(inputOffset: number): void {
    const gap = this.#ledger?.reconcile(inputOffset)
    if (gap?.kind === 'resend') this.#send(gap.bytes)?.catch((error: unknown) => this.#report(error))
    if (gap?.kind === 'lost') {
      this.#report(
        new Error(`terminal ${this.pid}: ${gap.lostBytes} bytes of input sent before its link was cut never reached it, more than is kept to resend`),
      )
    }
  }

  /** Re-adoption gave up (`error`: the terminal is gone there, or the link stayed down too long). */
  abandon(error: Error): void {
    if (this.#suspended) this.#end(error)
  }

  /** Before a call: a suspended terminal is adopted again first (bounded), or the call fails with the loss. */
  async #reachable(): Promise<void> {
    if (!this.#suspended) return
    await this.#readopter!.now(true)
    // Kept there, not ended: the call says so, whatever the loss itself said (a connection that ended reads as a death).
    if (this.#suspended) throw targetStillDown(this.#suspended)
  }

  onOutput(listener: TerminalOutputListener): () => void {
    return this.#output.subscribe(listener)
  }

  async write(data: string | Uint8Array): Promise<void> {
    // Only a suspended terminal waits here: a write on a live link takes no extra turn.
    if (this.#suspended) await this.#reachable()
    if (this.#lost) throw this.#lost
    if (this.#exit || this.#terminated) throw new SubprocessError('TERMINAL_EXITED', `terminal ${this.pid} has exited; input was not written`)
    // A ledger keeps a copy of the caller's array (it may send it again after a cut); a view does otherwise.
    const bytes =
      typeof data === 'string' ? Buffer.from(data, 'utf8') : this.#ledger ? Buffer.from(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
    if (bytes.length === 0) return
    await this.#send(bytes)
  }

  /** An input frame when the session host takes them (no reply; kept in the ledger), else a `write` request. */
  #send(bytes: Buffer): Promise<unknown> | undefined {
    // An input frame needs no reply: the session host writes it in order with the requests after it.
    if (this.#client.sendInput(this.#number, bytes)) {
      this.#ledger?.record(bytes)
      return undefined
    }
    return this.#client.request('write', { terminal: this.#number, data: bytes.toString('base64') })
  }

  resize(rows: number, cols: number): void {
    validateTerminalSize(rows, cols)
    this.#size = { rows, cols }
    if (this.#exit || this.#terminated || this.#suspended) return
    this.#client.request('resize', { terminal: this.#number, rows, cols }).catch(() => {})
  }

  async inspectForeground(options: InspectOptions = {}): Promise<ForegroundFacts | undefined> {
    if (this.#exit || this.#terminated) return undefined
    // Not waited for: a readiness probe during a cut learns nothing rather than stalling.
    if (this.#suspended) return undefined
    try {
      const facts = await this.#client.request('inspectForeground', { terminal: this.#number, options })
      return (facts ?? undefined) as ForegroundFacts | undefined
    } catch {
      return undefined
    }
  }

  async signalForeground(signal: NodeJS.Signals): Promise<number> {
    await this.#reachable()
    if (this.#lost) throw this.#lost
    if (this.#terminated) throw new SubprocessError('NO_FOREGROUND_GROUP', `cannot resolve the foreground process group of terminal ${this.pid}; it has exited`)
    return (await this.#client.request('signalForeground', { terminal: this.#number, signal })) as number
  }

  pinShellGroup(processGroupId: number): void {
    if (!Number.isSafeInteger(processGroupId) || processGroupId <= 0) {
      throw new SubprocessError('INVALID_SPEC', `a shell process group must be a positive integer, got ${String(processGroupId)}`)
    }
    if (this.#exit || this.#terminated) return
    if (this.#suspended) {
      this.#unsentPin = processGroupId
      return
    }
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
    this.#closing ??= this.#terminateNow()
    return this.#closing
  }

  async #terminateNow(): Promise<void> {
    // A suspended terminal is adopted again to be torn down; when that fails it ends on the far side by its TTL.
    if (this.#suspended) {
      await this.#readopter!.now(true)
      if (this.#suspended) return this.#end(this.#suspended)
    }
    if (this.#lost) return
    return this.#client.request('terminate', { terminal: this.#number }).then(
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
  }
}
