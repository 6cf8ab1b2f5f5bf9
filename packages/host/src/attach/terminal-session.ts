import type { ServerMessage } from '../human/protocol'
import { fromBase64, toBase64 } from '../human/protocol'
import { AttachError, type HostClient } from './host-client'

/** The key that detaches: Ctrl-] (as in telnet and docker attach), never forwarded to the session. */
const DETACH_BYTE = 0x1d

/** Switch to the alternate screen, home the cursor and clear it, so the replay draws on a blank page. */
const ENTER_ALTERNATE_SCREEN = '\x1b[?1049h\x1b[H\x1b[2J'
/** Back to the user's own screen, as it was before attaching. */
const LEAVE_ALTERNATE_SCREEN = '\x1b[?1049l'

/** The terminal (or pipes) the person attaches from. */
export interface AttachStreams {
  stdin: NodeJS.ReadStream
  stdout: NodeJS.WriteStream
  stderr: NodeJS.WriteStream
}

/**
 * Attach `client` to `sessionId` and relay until the person detaches (Ctrl-], or EOF on a piped
 * stdin), the session ends, or the host goes. On a TTY it takes the alternate screen and raw mode and
 * restores both before printing how it ended. Resolves with the exit code (0 detached/ended, 1 error).
 */
export async function runAttachedSession(client: HostClient, sessionId: string, readOnly: boolean, streams: AttachStreams): Promise<number> {
  const { stdin, stdout, stderr } = streams
  client.stayConnected()
  const screen = await client.request({ type: 'attach', sessionId, readOnly })
  if (screen.type !== 'screen') throw new AttachError('BAD_MESSAGE', `the host answered ${screen.type} to attach`)
  const writer = screen.writer
  stderr.write(`${attachNotice(screen)}\r\n`)
  const fullScreen = stdout.isTTY === true
  const raw = stdin.isTTY === true
  if (fullScreen && screen.rows && screen.cols && (stdout.rows < screen.rows || stdout.columns < screen.cols)) {
    stderr.write(
      `[${sessionId} is ${screen.cols}x${screen.rows}, your terminal ${stdout.columns}x${stdout.rows}: long lines wrap; enlarge it for a faithful view]\r\n`,
    )
  }
  // Whatever happens later, never leave the person's terminal on the alternate screen.
  const restoreOnExit = () => fullScreen && stdout.write(LEAVE_ALTERNATE_SCREEN)
  process.once('exit', restoreOnExit)
  if (fullScreen) stdout.write(`${ENTER_ALTERNATE_SCREEN}\x1b]2;dsh-terminal attach ${sessionId}${writer ? '' : ' (read-only)'}\x07`)
  stdout.write(fromBase64(screen.data))
  if (raw) stdin.setRawMode(true)

  return await new Promise<number>((resolve) => {
    let finished = false
    const finish = (code: number, line: string) => {
      if (finished) return
      finished = true
      stdin.off('data', onInput)
      stdin.off('end', detach)
      for (const signal of SIGNALS) process.off(signal, onSignal)
      if (raw) stdin.setRawMode(false)
      stdin.pause()
      process.off('exit', restoreOnExit)
      if (fullScreen) stdout.write(LEAVE_ALTERNATE_SCREEN)
      stderr.write(`${line}\n`)
      client.close()
      resolve(code)
    }
    let detaching = false
    function detach() {
      if (detaching) return
      detaching = true
      client.send({ type: 'detach' })
    }
    // A signal must end this process even when the host no longer answers: finish here, without
    // waiting for `detached`; closing the socket is what makes the host drop the view.
    function onSignal(signal: NodeJS.Signals) {
      finish(0, `[detached from ${sessionId} on ${signal}; it keeps running]`)
    }
    function onInput(chunk: Buffer) {
      if (detaching) return
      const stop = chunk.indexOf(DETACH_BYTE)
      const keys = stop === -1 ? chunk : chunk.subarray(0, stop)
      if (writer && keys.length > 0) client.send({ type: 'input', data: toBase64(keys) })
      if (stop !== -1) detach()
    }
    client.onMessage((message: ServerMessage) => {
      if (message.type === 'output') stdout.write(fromBase64(message.data))
      else if (message.type === 'detached') finish(0, `[detached from ${sessionId}; it keeps running]`)
      else if (message.type === 'end') finish(0, `[${sessionId} ended: ${message.reason}]`)
      else if (message.type === 'error' && message.fatal) finish(1, `dsh-terminal attach: ${message.message} (${message.code})`)
      else if (message.type === 'error') stderr.write(`\r\n[${message.message} (${message.code})]\r\n`)
    })
    void client.closed.then(() => finish(1, `dsh-terminal attach: host ${client.files.pid} went away; ${sessionId} is gone with it (HOST_GONE)`))
    stdin.on('data', onInput)
    stdin.on('end', detach)
    for (const signal of SIGNALS) process.on(signal, onSignal)
    stdin.resume()
  })
}

/** Signals that detach at once (restoring the terminal, hanging up) instead of leaving it raw. */
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

/** The line printed when attached: whether keystrokes go in, and how to leave. */
function attachNotice(screen: Extract<ServerMessage, { type: 'screen' }>): string {
  const id = screen.sessionId
  if (screen.writer) return `[attached to ${id}: you are typing into it; Ctrl-] detaches, it keeps running]`
  if (screen.readOnlyReason === 'HUMAN_WRITER_TAKEN') {
    return `[attached to ${id} read-only: another person holds the keyboard (an attach or the web view), so your keystrokes are ignored; Ctrl-] detaches]`
  }
  return `[attached to ${id} read-only (--read-only): keystrokes are ignored; Ctrl-] detaches]`
}
