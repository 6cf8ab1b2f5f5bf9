import { stat } from 'node:fs/promises'
import { installed } from 'dsh-testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { parseAsciicast, recordedSends } from '../src/index'
import { asciinemaCat, onlyRecording, type RecorderStack, scratchDir, startRecorderStack } from './stack'

const HAVE_ASCIINEMA = installed('asciinema') && installed('script')

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function stack(options: { maxBytesPerSession?: number } = {}): Promise<{ stack: RecorderStack; dir: string; scratch: string }> {
  const records = await scratchDir('dsh-rec-')
  cleanups.push(records.remove)
  const scratch = await scratchDir('dsh-rec-out-')
  cleanups.push(scratch.remove)
  const started = await startRecorderStack({ dir: `${records.dir}/recordings`, ...options })
  cleanups.push(() => started.dispose())
  return { stack: started, dir: `${records.dir}/recordings`, scratch: scratch.dir }
}

describe.skipIf(!HAVE_ASCIINEMA)('a recorded session, as asciinema 2 reads it', () => {
  it('plays back byte for byte what the terminal printed, with a header, send markers, input and resizes', async () => {
    const { stack: s, dir, scratch } = await stack()
    const id = await s.open('build')
    await s.run(id, "printf 'héllo wörld ✓\\n'")
    await s.run(id, 'seq 1 5')
    await s.run(id, 'false')
    await s.run(id, 'echo resized', { size: { rows: 30, cols: 120 } })
    await s.close(id)

    const { name, path, text } = await onlyRecording(s.recorder)
    expect(name).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d\\.\\d{3}Z_${id}_${process.pid}\\.cast$`))
    expect((await stat(path)).mode & 0o777).toBe(0o600)
    expect((await stat(dir)).mode & 0o777).toBe(0o700)

    const cast = parseAsciicast(text)
    expect(cast.skippedLines).toBe(0)
    expect(cast.header).toEqual({
      version: 2,
      width: 100,
      height: 24,
      timestamp: expect.any(Number),
      title: `dsh-terminal ${id} (build)`,
      env: { TERM: 'xterm-256color' },
    })
    expect(Math.abs(cast.header.timestamp - Date.now() / 1000)).toBeLessThan(120)
    const times = cast.events.map((event) => event.time)
    expect(times).toEqual([...times].sort((a, b) => a - b))
    expect(recordedSends(cast.events).map(({ number, callId, outcome }) => ({ number, callId, outcome }))).toEqual([
      { number: 1, callId: 'test-1', outcome: 'stdin_read, exit 0' },
      { number: 2, callId: 'test-2', outcome: 'stdin_read, exit 0' },
      { number: 3, callId: 'test-3', outcome: 'stdin_read, exit 1' },
      { number: 4, callId: 'test-4', outcome: 'stdin_read, exit 0' },
    ])
    expect(cast.events.filter((event) => event.code === 'i').map((event) => event.data)).toEqual([
      "printf 'héllo wörld ✓\\n'\r",
      'seq 1 5\r',
      'false\r',
      'echo resized\r',
    ])
    expect(cast.events.filter((event) => event.code === 'r').map((event) => event.data)).toEqual(['120x30'])

    // asciinema's own reader prints exactly the bytes the PTY produced, startup included.
    const printed = await asciinemaCat(path, scratch)
    const produced = Buffer.concat(s.raw.get(id)!)
    expect(printed.length).toBe(produced.length)
    expect(printed.equals(produced)).toBe(true)
    expect(printed.toString()).toContain('héllo wörld ✓')
  })

  it('plays back byte for byte an output of many batches (several MiB, UTF-8 split across PTY reads)', async () => {
    const { stack: s, scratch } = await stack({ maxBytesPerSession: 64 * 1024 * 1024 })
    const id = await s.open()
    // About 4 MiB: several batches (their buffers grow from 64 KiB to 1 MiB), PTY chunks of every size, multi-byte characters cut anywhere.
    await s.run(id, "head -c 3000000 /dev/urandom | base64 -w 97; for i in $(seq 1 3000); do printf 'ünï-%d✓ ' $i; done; echo", { timeoutMs: 60_000 })
    await s.close(id)
    const { path } = await onlyRecording(s.recorder)
    const printed = await asciinemaCat(path, scratch)
    const produced = Buffer.concat(s.raw.get(id)!)
    expect(produced.length).toBeGreaterThan(4_000_000)
    expect(printed.equals(produced)).toBe(true)
  }, 120_000)

  it('stops at maxBytesPerSession with a marker saying so, and asciinema still plays the file', async () => {
    const maxBytesPerSession = 16_384
    const { stack: s, scratch } = await stack({ maxBytesPerSession })
    const id = await s.open()
    await s.run(id, 'seq 1 20000')
    await s.run(id, 'echo after-the-bound')
    await s.close(id)
    const { path, text } = await onlyRecording(s.recorder)
    expect((await stat(path)).size).toBeLessThanOrEqual(maxBytesPerSession)
    const cast = parseAsciicast(text)
    expect(cast.events.at(-1)).toMatchObject({ code: 'm', data: `recording stopped: maxBytesPerSession (${maxBytesPerSession} bytes) reached` })
    expect(text).not.toContain('after-the-bound')
    const printed = (await asciinemaCat(path, scratch)).toString()
    // A prefix of the session's output, cut at an event boundary.
    expect(Buffer.concat(s.raw.get(id)!).toString().startsWith(printed)).toBe(true)
  })
})
