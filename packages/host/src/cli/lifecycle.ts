import type { Readable } from 'node:stream'

/** Why a host began to shut down. */
export type ShutdownReason = 'input-end' | 'output-closed' | NodeJS.Signals

/** Signals that end a host gracefully (the first) or at once (a second one). */
export const SHUTDOWN_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP']

/** Longest a graceful shutdown may take before the process exits anyway (exit cleanup still kills every tree). */
export const SHUTDOWN_BOUND_MS = 20_000

/**
 * Resolve with the first reason to stop: the input ended (client disconnected; only when `input` is
 * given), the output broke, or a signal arrived. From then on a second signal, or a shutdown that outlives
 * {@link SHUTDOWN_BOUND_MS}, exits at once: the local subprocess provider kills every process tree
 * synchronously on exit, so even a forced exit leaves no session process behind.
 */
export function waitForShutdown(output: NodeJS.WritableStream, input?: Readable): Promise<ShutdownReason> {
  return new Promise((resolve) => {
    let started = false
    const begin = (reason: ShutdownReason) => {
      if (started) {
        if (reason !== 'input-end' && reason !== 'output-closed') process.exit(130)
        return
      }
      started = true
      setTimeout(() => process.exit(1), SHUTDOWN_BOUND_MS).unref()
      resolve(reason)
    }
    input?.once('end', () => begin('input-end'))
    input?.once('close', () => begin('input-end'))
    output.on('error', () => begin('output-closed'))
    for (const signal of SHUTDOWN_SIGNALS) process.on(signal, () => begin(signal))
  })
}

/** Keep stdout for the protocol: anything a plugin prints with console.log goes to stderr instead. */
export function reserveStdout(): void {
  const toStderr = (...args: unknown[]) => console.error(...args)
  console.log = toStderr
  console.info = toStderr
  console.debug = toStderr
}
