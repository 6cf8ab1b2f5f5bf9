import { isSubprocessError, type SubprocessTerminalHandle } from 'dsh-subprocess'

/**
 * Whether an exited terminal died with the session host that held it rather than by itself. The
 * seam reports such a terminal as killed by SIGKILL; its provider then refuses every later write with
 * `SESSION_HOST_LOST` (dsh-subprocess-remote's contract), so an empty write tells the two apart
 * without writing a byte. An in-process terminal answers `TERMINAL_EXITED` (or nothing): not lost.
 */
export async function diedWithSessionHost(handle: SubprocessTerminalHandle): Promise<boolean> {
  const exit = handle.exit
  if (!exit || exit.exitCode !== null || exit.signal !== 'SIGKILL') return false
  try {
    await handle.write(new Uint8Array(0))
    return false
  } catch (error) {
    return isSubprocessError(error, 'SESSION_HOST_LOST')
  }
}
