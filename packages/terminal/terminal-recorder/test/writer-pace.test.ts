import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { eventually } from 'dsh-testkit'
import { describe, expect, it } from 'vitest'
import { CALM_BYTES, HURRY_BYTES, WRITER_NICE, WriterPace } from '../src/writer-pace'
import { WriterThread } from '../src/writer-thread'
import { scratchDir } from './stack'

/** A thread's nice value, from /proc/self/task/<tid>/stat (field 19, counted after the command name). */
function niceOf(threadId: number): number {
  const stat = readFileSync(`/proc/self/task/${threadId}/stat`, 'utf8')
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])
}

const isRoot = process.getuid?.() === 0

describe.skipIf(process.platform !== 'linux')('the writer thread’s priority', () => {
  it.skipIf(!isRoot)('runs at nice 19, at 0 while a recording is HURRY_BYTES behind, and at 19 again once it caught up (as root)', async () => {
    const scratch = await scratchDir('dsh-pace-')
    const writer = new WriterThread()
    try {
      const path = join(scratch.dir, 'flood.cast')
      const channel = writer.open(
        { path, header: '{"version": 2, "width": 80, "height": 24}\n', maxBytes: 1024 ** 3, reserve: 256 },
        { onStopped() {}, onError() {} },
      )
      const threadId = await eventually(async () => writer.pace.threadId, 'the writer thread tells its id')
      expect(niceOf(threadId)).toBe(WRITER_NICE)
      // In one turn of this thread: the writer cannot take any of it yet, so the recording is that far behind.
      const chunk = new Uint8Array(64 * 1024).fill(0x61)
      for (let queued = 0; queued <= HURRY_BYTES; queued += chunk.length) channel.output(queued / 1e6, chunk.slice())
      expect(channel.pendingBytes).toBeGreaterThanOrEqual(HURRY_BYTES)
      expect(writer.pace.hurrying).toBe(true)
      expect(niceOf(threadId)).toBe(0)
      await eventually(async () => (niceOf(threadId) === WRITER_NICE ? true : undefined), 'the writer yields again once it caught up')
      expect(channel.pendingBytes).toBeLessThanOrEqual(CALM_BYTES)
      await channel.close(9)
      expect(statSync(path).size).toBeGreaterThan(HURRY_BYTES)
    } finally {
      await writer.dispose()
      await scratch.remove()
    }
  })

  it('stays low, and stops trying, where raising the priority is refused', () => {
    const pace = new WriterPace()
    pace.started(2 ** 30) // no such thread: setpriority fails as it does for a user without RLIMIT_NICE
    pace.behind(HURRY_BYTES)
    expect(pace.hurrying).toBe(false)
    pace.started(process.pid)
    pace.behind(HURRY_BYTES)
    expect(pace.hurrying).toBe(false)
  })
})
