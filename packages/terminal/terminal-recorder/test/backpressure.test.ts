import type { TerminalSessionId } from 'dsh-terminal'
import { describe, expect, it } from 'vitest'
import { SessionRecording } from '../src/session-recording'
import { MAX_PENDING_BYTES, type WriterThread } from '../src/writer-thread'

/*
 * A writer thread that never catches up (a stalled disk), stood in for by a channel that keeps
 * everything pending: the race a real disk cannot be made to lose on demand. The recording must stop
 * with a marker once more than MAX_PENDING_BYTES wait, and hold nothing more, while the session runs on.
 */

/** A channel that counts what it is handed and never writes any of it. */
class StalledChannel {
  pendingBytes = 0
  outputs = 0
  stops: string[] = []
  output(_seconds: number, bytes: Uint8Array): void {
    this.outputs += 1
    this.pendingBytes += bytes.length
  }
  event(_seconds: number, _code: string, data: string): void {
    this.pendingBytes += data.length
  }
  stop(_seconds: number, reason: string): void {
    this.stops.push(reason)
  }
  close(): Promise<void> {
    return Promise.resolve()
  }
}

describe('a recording whose writer falls behind', () => {
  it('stops with one marker past MAX_PENDING_BYTES and hands the writer nothing more', async () => {
    const channel = new StalledChannel()
    const writer = { open: () => channel } as unknown as WriterThread
    const recording = new SessionRecording(
      { sessionId: 'pty-1' as TerminalSessionId, ownerId: 'agent-1', type: 'shell', startedAt: Date.now() },
      { directory: '/nonexistent', maxBytes: 1024 ** 3, secrets: [], hostPid: process.pid, writer, onError: () => {} },
    )
    recording.published({ size: { rows: 24, cols: 80 } } as Parameters<SessionRecording['published']>[0])
    const chunk = new Uint8Array(64 * 1024).fill(0x61)
    const chunks = Math.ceil((2 * MAX_PENDING_BYTES) / chunk.length)
    for (let index = 0; index < chunks; index++) recording.output(chunk)
    expect(channel.stops).toHaveLength(1)
    expect(channel.stops[0]).toMatch(/fell more than \d+ bytes behind/)
    // Held at most the bound: everything after the stop was dropped, not queued.
    expect(channel.pendingBytes).toBeLessThanOrEqual(MAX_PENDING_BYTES)
    expect(channel.outputs).toBe(Math.floor(MAX_PENDING_BYTES / chunk.length))
    recording.sendStarted({ number: 1, text: 'echo more', submit: true } as unknown as Parameters<SessionRecording['sendStarted']>[0])
    expect(channel.pendingBytes).toBeLessThanOrEqual(MAX_PENDING_BYTES)
    await recording.close()
  })
})
