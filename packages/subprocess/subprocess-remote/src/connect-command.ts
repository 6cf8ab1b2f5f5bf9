import { type ChildProcess, spawn } from 'node:child_process'
import type { Readable, Writable } from 'node:stream'
import { SubprocessError } from 'dsh-subprocess'

/** A running connect command: the streams that reach `dsh-session-host --stdio`, and how to end it. */
export interface CommandConnection {
  /** The command's stdout: frames from the session host. */
  readonly input: Readable
  /** The command's stdin: frames to the session host. */
  readonly output: Writable
  /** End the command (after the client hung up, it exits by itself; this makes sure). */
  readonly stop: () => void
}

/**
 * Run `argv` (ssh, `kubectl exec -i`, `docker exec -i`, or `dsh-session-host --stdio` itself) with
 * its stdin/stdout as the protocol stream; its stderr is the session host's log and passes through.
 */
export function runConnectCommand(argv: readonly string[]): CommandConnection {
  const [file = '', ...args] = argv
  let child: ChildProcess
  try {
    child = spawn(file, args, { stdio: ['pipe', 'pipe', 'inherit'] })
  } catch (error) {
    throw new SubprocessError('SPAWN_FAILED', `could not run the connect command ${file}: ${(error as Error).message}`)
  }
  // A failed exec surfaces as an 'error' event and closes the streams: the client then reports the loss.
  child.once('error', () => {})
  return {
    input: child.stdout!,
    output: child.stdin!,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    },
  }
}
