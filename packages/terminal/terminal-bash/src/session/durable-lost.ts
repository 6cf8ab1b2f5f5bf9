import { isSubprocessError, type SubprocessTerminalHandle } from 'dsh-subprocess'

/**
 * How long the empty write that tells a session host's loss from an exit may take. Through a
 * connect command the write's answer crosses a link that may be stuck; past this the exit stands
 * as an exit (what is known for sure), so the send it ends is never held up by the look.
 */
export const LOSS_LOOK_MS = 1_000

/**
 * Whether an exited terminal died with the session host that held it rather than by itself. The
 * seam reports such a terminal as killed by SIGKILL; its provider then refuses every later write with
 * `SESSION_HOST_LOST` (dsh-subprocess-remote's contract), so an empty write tells the two apart
 * without writing a byte. An in-process terminal answers `TERMINAL_EXITED` (or nothing): not lost;
 * neither is one whose provider gives no answer within {@link LOSS_LOOK_MS}.
 */
export async function diedWithSessionHost(handle: SubprocessTerminalHandle): Promise<boolean> {
  const exit = handle.exit
  if (!exit || exit.exitCode !== null || exit.signal !== 'SIGKILL') return false
  let timer: NodeJS.Timeout | undefined
  const unanswered = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), LOSS_LOOK_MS)
    timer.unref()
  })
  const answered = handle.write(new Uint8Array(0)).then(
    () => false,
    // A link given up as silent (a cut network, TARGET_UNREACHABLE) is not a loss of the session host:
    // a non-durable terminal there ends with the connection, and its send ends as `session_exit`.
    (error: unknown) => isSubprocessError(error, 'SESSION_HOST_LOST'),
  )
  try {
    return await Promise.race([answered, unanswered])
  } finally {
    clearTimeout(timer)
  }
}
