import type { Readable, Writable } from 'node:stream'
import { connectLocalSessionHost, type LocalSocketOptions } from './local-start'

/**
 * `dsh-session-host --stdio`: copy bytes between this process's stdin/stdout and the per-user socket
 * session host (started on first use), without reading the frames. The socket session host holds
 * the terminals, so durable ones outlive this relay and the link it serves (an ssh connection that
 * dropped); the next relay reaches the same session host. Resolves once either side ended.
 */
export async function relayToSocket(options: LocalSocketOptions, input: Readable, output: Writable): Promise<void> {
  const socket = await connectLocalSessionHost(options)
  socket.on('error', () => socket.destroy())
  // The client's end (EOF on stdin) half-closes the socket: the session host ends that connection
  // (detaching its durable terminals), then closes its side, which ends this relay.
  input.pipe(socket)
  socket.pipe(output)
  input.once('error', () => socket.end())
  output.once('error', () => socket.destroy())
  await new Promise<void>((resolve) => socket.once('close', () => resolve()))
  input.unpipe(socket)
}
