/** Default gap between two progress notifications of one call. */
export const DEFAULT_PROGRESS_INTERVAL_MS = 1000

/** One MCP `notifications/progress` payload. */
export interface ProgressParams {
  progressToken: string | number
  progress: number
  message: string
}

/**
 * Report a long call's liveness while it runs: every `intervalMs` one progress notification whose
 * `progress` counts the notifications (strictly increasing, as MCP requires) and whose message says
 * what is being waited on and for how long.
 * Clients that reset their request timeout on progress then keep waiting for a long send.
 * Returns the function that stops it; a failed notification (client gone) stops it too.
 */
export function startProgress(
  token: string | number,
  title: string,
  send: (params: ProgressParams) => Promise<void>,
  intervalMs: number = DEFAULT_PROGRESS_INTERVAL_MS,
): () => void {
  const started = Date.now()
  let count = 0
  const timer = setInterval(() => {
    count++
    const seconds = Math.floor((Date.now() - started) / 1000)
    send({ progressToken: token, progress: count, message: `${title}: still running after ${seconds}s` }).catch(stop)
  }, intervalMs)
  timer.unref?.()
  function stop(): void {
    clearInterval(timer)
  }
  return stop
}
