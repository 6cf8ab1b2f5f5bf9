import type { Socket } from 'node:net'
import type { Readable, Writable } from 'node:stream'
import { connectLocalSessionHost, type LocalSocketOptions } from './local-start'
import { encodeHandoffOffer, HANDOFF_DECLINED, HANDOFF_TAKEN, readHandoffLine } from './protocol/handoff'

/** This process's stdin and stdout, asked for only when bytes must be copied (a taken handoff never touches them). */
export interface RelayStdio {
  readonly input: () => Readable
  readonly output: () => Writable
}

/**
 * `dsh-session-host --stdio`: reach the per-user socket session host (started on first use) and
 * offer it this process's stdin and stdout (the handoff, PROTOCOL.md "Transports"). Taken, the
 * session host reads and writes the link's pipes itself and this process only stands for the link
 * until either side ends; declined (the stdio are not pipes), bytes are copied both ways without
 * reading the frames. The socket session host holds the terminals either way, so durable ones
 * outlive this relay and the link it serves. Resolves once the link or the session host ended.
 */
export async function relayToSocket(options: LocalSocketOptions, stdio: RelayStdio): Promise<void> {
  let socket = await reach(options)
  socket.write(encodeHandoffOffer(process.pid))
  const answer = await readHandoffLine(socket, isAnswerStart, options.startTimeoutMs)
  if (answer.kind === 'line' && answer.line === HANDOFF_TAKEN) return closed(socket)
  if (answer.kind === 'frames') {
    // A session host from before the handoff: its hello came first. Copy bytes on a fresh connection.
    socket.destroy()
    socket = await reach(options)
  } else if (answer.kind === 'failed' || !answer.line.startsWith(`${HANDOFF_DECLINED} `)) {
    socket.destroy()
    throw new Error(`the session host answered the handoff with ${answer.kind === 'failed' ? answer.reason : JSON.stringify(answer.line)}`)
  }
  return copy(socket, stdio.input(), stdio.output())
}

async function reach(options: LocalSocketOptions): Promise<Socket> {
  const socket = await connectLocalSessionHost(options)
  socket.on('error', () => socket.destroy())
  return socket
}

/** An answer line starts with a lowercase letter; a frame's first byte is its length's high byte (0). */
function isAnswerStart(firstByte: number): boolean {
  return firstByte >= 0x61 && firstByte <= 0x7a
}

function closed(socket: Socket): Promise<void> {
  socket.resume()
  return new Promise<void>((resolve) => socket.once('close', () => resolve()))
}

/** Copy bytes between the socket and stdin/stdout until the socket closes. */
async function copy(socket: Socket, input: Readable, output: Writable): Promise<void> {
  // The client's end (EOF on stdin) half-closes the socket: the session host ends that connection
  // (detaching its durable terminals), then closes its side, which ends this relay.
  input.pipe(socket)
  socket.pipe(output)
  input.once('error', () => socket.end())
  output.once('error', () => socket.destroy())
  await closed(socket)
  input.unpipe(socket)
}
