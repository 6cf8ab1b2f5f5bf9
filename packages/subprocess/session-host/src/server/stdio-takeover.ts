import { closeSync, constants, fstatSync, openSync, statSync } from 'node:fs'
import { Socket } from 'node:net'
import { errorMessage } from 'dsh-basics'

/** The relay's stdin and stdout, opened by the session host: the link's own pipes. */
export interface TakenStdio {
  /** Reads what the link's far end (sshd, the container engine) writes to the relay's stdin. */
  readonly input: Socket
  /** Writes where the relay's stdout goes. */
  readonly output: Socket
  /** Close both (idempotent); output still queued gets `lingerMs` to drain first. */
  close(lingerMs: number): void
}

/**
 * Open `/proc/<pid>/fd/0` and `/proc/<pid>/fd/1` of the relay that offered them: only when that process
 * runs as this uid (the socket already admits no one else) and both are pipes, whose /proc links open
 * the same pipe again (a socket's or a terminal's would not be the link's own stream). Returns a
 * reason instead when it cannot, and the relay then copies bytes itself.
 */
export function takeOverStdio(pid: number): TakenStdio | string {
  const uid = process.getuid?.() ?? -1
  try {
    const owner = statSync(`/proc/${pid}`).uid
    if (owner !== uid) return `process ${pid} runs as uid ${owner}, not ${uid}`
  } catch (error) {
    return `process ${pid}: ${errorMessage(error)}`
  }
  // Non-blocking: a pipe's open never waits for its other end, and libuv polls the descriptors.
  const input = openPipe(`/proc/${pid}/fd/0`, constants.O_RDONLY | constants.O_NONBLOCK)
  if (typeof input === 'string') return input
  const output = openPipe(`/proc/${pid}/fd/1`, constants.O_WRONLY | constants.O_NONBLOCK)
  if (typeof output === 'string') {
    closeSync(input)
    return output
  }
  try {
    return stdioOf(new Socket({ fd: input, readable: true, writable: false }), new Socket({ fd: output, readable: false, writable: true }))
  } catch (error) {
    closeSync(input)
    closeSync(output)
    return `cannot use the relay's stdio: ${errorMessage(error)}`
  }
}

/** Open one of the relay's descriptors through /proc; a reason (and nothing left open) unless it is a pipe. */
function openPipe(path: string, flags: number): number | string {
  let fd: number
  try {
    fd = openSync(path, flags)
  } catch (error) {
    return `cannot open ${path}: ${(error as NodeJS.ErrnoException).code ?? errorMessage(error)}`
  }
  if (fstatSync(fd).isFIFO()) return fd
  closeSync(fd)
  return `${path} is not a pipe`
}

function stdioOf(input: Socket, output: Socket): TakenStdio {
  let closed = false
  return {
    input,
    output,
    close(lingerMs) {
      if (closed) return
      closed = true
      input.destroy()
      if (output.writableFinished || output.writableLength === 0) return void output.destroy()
      // A peer that stopped reading must not keep the descriptor: what it did not take by then is dropped.
      const timer = setTimeout(() => output.destroy(), lingerMs)
      timer.unref()
      output.once('finish', () => {
        clearTimeout(timer)
        output.destroy()
      })
      if (!output.writableEnded) output.end()
    },
  }
}
