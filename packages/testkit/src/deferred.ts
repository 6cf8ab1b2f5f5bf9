/**
 * A promise with its settle functions exposed, so a test decides when each step of the code under
 * test happens (a held spawn, a gated write) instead of racing it with timers.
 */
export class Deferred<T = void> {
  /** Settles when the test calls {@link Deferred.resolve} or {@link Deferred.reject}. */
  readonly promise: Promise<T>
  /** Fulfil {@link Deferred.promise} with `value`; later calls are ignored, as with any promise. */
  resolve!: (value: T) => void
  /** Reject {@link Deferred.promise} with `reason`; later calls are ignored, as with any promise. */
  reject!: (reason: unknown) => void

  constructor() {
    this.promise = new Promise<T>((resolve, reject) => {
      this.resolve = resolve
      this.reject = reject
    })
  }
}
