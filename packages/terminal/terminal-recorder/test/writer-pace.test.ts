import { spawn } from 'node:child_process'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { eventually } from 'dsh-testkit'
import { describe, expect, it } from 'vitest'
import { CALM_BYTES, type ClassSetter, HURRY_BYTES, WRITER_NICE, WriterPace } from '../src/writer-pace'
import { WriterThread } from '../src/writer-thread'
import { scratchDir } from './stack'

/** A thread's nice value, from /proc/self/task/<tid>/stat (field 19, counted after the command name). */
function niceOf(threadId: number): number {
  const stat = readFileSync(`/proc/self/task/${threadId}/stat`, 'utf8')
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])
}

/** A thread's scheduling policy (field 41): 0 is SCHED_OTHER, 5 SCHED_IDLE. */
function policyOf(threadId: number): number {
  const stat = readFileSync(`/proc/self/task/${threadId}/stat`, 'utf8')
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[38])
}
const SCHED_OTHER = 0
const SCHED_IDLE = 5

const isRoot = process.getuid?.() === 0

describe.skipIf(process.platform !== 'linux')('the writer thread’s priority', () => {
  it.skipIf(!isRoot)(
    'runs idle-class at nice 19, normal at 0 while a recording is HURRY_BYTES behind, and idle at 19 again once it caught up (as root)',
    async () => {
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
        await writer.pace.settled()
        expect(policyOf(threadId)).toBe(SCHED_IDLE)
        // In one turn of this thread: the writer cannot take any of it yet, so the recording is that far behind.
        const chunk = new Uint8Array(64 * 1024).fill(0x61)
        for (let queued = 0; queued <= HURRY_BYTES; queued += chunk.length) channel.output(queued / 1e6, chunk.slice())
        expect(channel.pendingBytes).toBeGreaterThanOrEqual(HURRY_BYTES)
        expect(writer.pace.hurrying).toBe(true)
        expect(niceOf(threadId)).toBe(0)
        // Caught up already (the class change is a child process) or still a normal thread.
        await writer.pace.settled()
        expect(writer.pace.hurrying ? policyOf(threadId) : SCHED_OTHER).toBe(SCHED_OTHER)
        await eventually(async () => (niceOf(threadId) === WRITER_NICE ? true : undefined), 'the writer yields again once it caught up')
        await writer.pace.settled()
        expect(policyOf(threadId)).toBe(SCHED_IDLE)
        expect(channel.pendingBytes).toBeLessThanOrEqual(CALM_BYTES)
        await channel.close(9)
        expect(statSync(path).size).toBeGreaterThan(HURRY_BYTES)
      } finally {
        await writer.dispose()
        await scratch.remove()
      }
    },
  )

  it('stays low, and stops trying, where raising the priority is refused', () => {
    const pace = new WriterPace(async () => true, false)
    pace.started(2 ** 30) // no such thread: setpriority fails as it does for a user without RLIMIT_NICE
    pace.behind(HURRY_BYTES)
    expect(pace.hurrying).toBe(false)
    pace.started(process.pid)
    pace.behind(HURRY_BYTES)
    expect(pace.hurrying).toBe(false)
  })

  it('keeps its class changes in order, makes none once the thread ended, and never enters the idle class where it could not leave it', async () => {
    // A process of its own stands in for the thread: renicing it harms nothing (allowed from 0 to 0 and up to 19 for anyone).
    const standIn = spawn('sleep', ['30'], { stdio: 'ignore' })
    try {
      const threadId = standIn.pid!
      const changes: string[] = []
      let releaseStart: (() => void) | undefined
      const setter: ClassSetter = (id, writerClass) =>
        new Promise((resolve) => {
          changes.push(`${writerClass}:${id}`)
          if (releaseStart === undefined) releaseStart = () => resolve(true)
          else resolve(true)
        })
      const pace = new WriterPace(setter, true)
      pace.started(threadId)
      pace.behind(HURRY_BYTES)
      expect(pace.hurrying).toBe(true)
      await new Promise((resolve) => setImmediate(resolve))
      expect(changes).toEqual([`idle:${threadId}`]) // the hurry waits for the start's change
      releaseStart?.()
      await pace.settled()
      expect(changes).toEqual([`idle:${threadId}`, `normal:${threadId}`])
      pace.ended()
      pace.caughtUp(0)
      await pace.settled()
      expect(changes).toHaveLength(2)

      const unprivileged: string[] = []
      const plain = new WriterPace(async (_, writerClass) => Boolean(unprivileged.push(writerClass)), false)
      plain.started(threadId)
      plain.behind(HURRY_BYTES)
      await plain.settled()
      expect(unprivileged).toEqual([])
    } finally {
      standIn.kill('SIGKILL')
    }
  })
})
