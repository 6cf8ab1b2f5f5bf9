import { WARM_GO, WARM_READY } from './launcher-script'

/** Where a warm launcher stands, as its output shows it. */
type Stage = 'starting' | 'ready' | 'launched' | 'broken'

/**
 * The output of a warm launcher before its program starts, which never reaches a subscriber: the
 * ready marker, then, after the frame was written, the go marker. What follows the go marker is the
 * program's own output and passes unchanged.
 */
export class LauncherPrelude {
  /** Resolves true once the launcher printed exactly the ready marker, false when it printed anything else or ended first. */
  readonly ready: Promise<boolean>
  #stage: Stage = 'starting'
  #pending: Buffer = Buffer.alloc(0)
  #settle: (ready: boolean) => void = () => {}

  /** Watches a launcher that was just spawned. */
  constructor() {
    this.ready = new Promise((resolve) => {
      this.#settle = resolve
    })
  }

  /** True while the launcher waits for its frame and printed nothing unexpected: it may be launched. */
  get launchable(): boolean {
    return this.#stage === 'ready'
  }

  /** The frame is being written: from now on the output is the go marker, then the program's. */
  launched(): void {
    if (this.#stage !== 'ready') throw new Error('a warm launcher was launched before it was ready')
    this.#stage = 'launched'
  }

  /**
   * Take one chunk of the terminal's output. Returns the program's part of it (possibly empty) once
   * the go marker has passed, and `undefined` while the chunk still belongs to the launcher.
   */
  feed(chunk: Buffer): Buffer | undefined {
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk])
    switch (this.#stage) {
      case 'starting':
        return this.#starting()
      case 'launched':
        return this.#launched()
      default:
        // Output while waiting for the frame is not the protocol: never hand this launcher out.
        this.#stage = 'broken'
        this.#pending = Buffer.alloc(0)
        return undefined
    }
  }

  /** The launcher's terminal ended (it exited): it was never ready if it was not by now. */
  ended(): void {
    if (this.#stage === 'starting') this.#stage = 'broken'
    this.#settle(false)
  }

  #starting(): undefined {
    const seen = this.#pending
    if (seen.length < WARM_READY.length && WARM_READY.subarray(0, seen.length).equals(seen)) return undefined
    const ready = seen.equals(WARM_READY)
    this.#stage = ready ? 'ready' : 'broken'
    this.#pending = Buffer.alloc(0)
    this.#settle(ready)
    return undefined
  }

  #launched(): Buffer | undefined {
    const at = this.#pending.indexOf(WARM_GO)
    if (at < 0) {
      // Not all of the go marker yet: keep what could be its start.
      this.#pending = this.#pending.subarray(Math.max(0, this.#pending.length - (WARM_GO.length - 1)))
      return undefined
    }
    const program = this.#pending.subarray(at + WARM_GO.length)
    this.#pending = Buffer.alloc(0)
    return program
  }
}
