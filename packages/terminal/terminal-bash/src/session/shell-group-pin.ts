import { type ForegroundFacts, type InspectOptions, isStdinWaitProvenOrUnprovable, type SubprocessTerminalHandle } from 'dsh-subprocess'
import type { IdlePrompt } from './between-sends'
import type { OutputLedger } from './output-ledger'
import type { TerminalStream } from './terminal-stream'

/** What the pin's look after startup asks of its session. */
export interface PinLookHooks {
  /** The session started closing: the look's sample is not used. */
  closing(): boolean
  /** The shell's group was pinned from the look: a durable terminal stores its facts. */
  pinned(): void
  /** The look found the shell idle at its prompt: the first send may use that sample. */
  idle(pinned: IdlePrompt): void
}

/**
 * The shell's process group, pinned once after startup, and the look that finds it while it runs:
 * writes, signals and inspections wait for that look (so nothing is typed before it sampled).
 */
export class ShellGroupPin {
  /** The look in flight: it resolves with its sample and the arrivals it saw when the shell was idle, or undefined. */
  #pinning: Promise<IdlePrompt | undefined> | undefined

  constructor(
    private readonly handle: SubprocessTerminalHandle,
    private readonly stream: TerminalStream,
    private readonly ledger: OutputLedger,
  ) {}

  /** Pin `processGroupId` as the shell's (kept in the ledger for an adopter). */
  pin(processGroupId: number): void {
    this.ledger.pinned(processGroupId)
    this.handle.pinShellGroup(processGroupId)
  }

  /**
   * Tell the provider which process group is the shell's. Right after startup settled on the
   * controlled prompt nothing was typed yet, so the group in front is the shell's own. That is the
   * top-level process's group when bash is the top-level process, but not under a sandbox launcher
   * (`bwrap → bwrap → bash`), where bash leads a group of its own; without the pin the prompt tier
   * would never see "the shell in front" and SIGKILL to the idle shell would not be refused.
   * A startup that ended on the prompt with the shell already recognised (`known`) pins from that
   * sample at once. Otherwise the foreground is inspected after the open returned, off the opener's
   * path, and the first inspection asked meanwhile gets its sample when nothing arrived since.
   * Without the controlled prompt (a configured shell that prints no marker) nothing is pinned and
   * the provider's default stays.
   */
  start(known: ForegroundFacts | undefined, hooks: PinLookHooks): void {
    if (!this.stream.promptReady) return
    if (known) return this.pin(known.processGroupId)
    const arrivals = this.stream.arrivals
    const pinning = this.handle.inspectForeground().then(
      (facts) => {
        if (!facts || hooks.closing()) return undefined
        this.pin(facts.processGroupId)
        hooks.pinned()
        // That sample, seen through the pin, is the shell idle at its prompt: the first send may use it
        // as its pre-write facts, exactly as after a send that ended on the prompt.
        const idle = isStdinWaitProvenOrUnprovable(facts) && arrivals === this.stream.arrivals && this.stream.promptReady
        if (!idle) return undefined
        const pinned = { facts: { ...facts, isShellGroup: true }, arrivals }
        hooks.idle(pinned)
        return pinned
      },
      // The provider could not look: its default group stays, as for a shell without the marker.
      () => undefined,
    )
    this.#pinning = pinning
    void pinning.then(() => {
      if (this.#pinning === pinning) this.#pinning = undefined
    })
  }

  /** Write `data` once the startup pin is in place (at once when it is): a send's write, with no closure made for it. */
  write(data: string): Promise<void> {
    const pinning = this.#pinning
    return pinning ? pinning.then(() => this.handle.write(data)) : this.handle.write(data)
  }

  /** Run `action` once the startup pin is in place (at once when it is). */
  after<T>(action: () => Promise<T>): Promise<T> {
    const pinning = this.#pinning
    return pinning ? pinning.then(action) : action()
  }

  /**
   * One foreground inspection, after the startup pin. Asked while the pin's look runs, a plain
   * inspection gets that look's sample if nothing arrived since it was taken: nothing was written
   * meanwhile either (writes wait for the pin), so a second look would see the same.
   */
  inspect(options?: InspectOptions): Promise<ForegroundFacts | undefined> {
    const pinning = this.#pinning
    if (!pinning) return this.handle.inspectForeground(options)
    return pinning.then((pinned) =>
      pinned && !options?.terminalModes && pinned.arrivals === this.stream.arrivals ? pinned.facts : this.handle.inspectForeground(options),
    )
  }
}
