/**
 * `promise`'s outcome, or a rejection with `signal.reason` once `signal` aborts first (at once when
 * it already has). The abort listener is removed whichever settles first; without a signal this is
 * `promise` itself.
 */
export function raceAbort<T>(promise: PromiseLike<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return Promise.resolve(promise)
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}

/**
 * `promise`'s outcome, or `onTimeout()`'s once `ms` milliseconds pass first: a bounded wait whose
 * caller says what "too late" means (a fallback value, or a throw). The timer is cleared when
 * `promise` settles first, so nothing is left to keep the process alive.
 */
export function withTimeout<T, U>(promise: PromiseLike<T>, ms: number, onTimeout: () => U | PromiseLike<U>): Promise<T | U> {
  return new Promise<T | U>((resolve, reject) => {
    const timer = setTimeout(() => {
      try {
        resolve(onTimeout())
      } catch (error) {
        reject(error)
      }
    }, ms)
    promise.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error: unknown) => {
        clearTimeout(timer)
        reject(error)
      },
    )
  })
}

/**
 * Resolves once `promise` settles, either way, or after `ms` milliseconds at most: for waiting on a
 * cleanup whose outcome does not matter, only that it gets its chance.
 */
export function settledWithin(promise: PromiseLike<unknown>, ms: number): Promise<void> {
  return withTimeout(promise.then(ignore, ignore), ms, () => undefined)
}

function ignore(): void {}
