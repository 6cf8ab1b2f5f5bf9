import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { capture, mountRuntime } from './helpers'

// Input through a real PTY whose program does not read for a while: in raw mode the kernel keeps
// input until it is read, so a large write fills the PTY and the rest waits in the provider. node-pty's
// own queue retried from its thread pool and, once the program was gone, wrote to the closed
// descriptor ("Unhandled pty write error EBADF"). The provider's writer keeps order and stops with the PTY.
let env: Awaited<ReturnType<typeof mountRuntime>> | undefined
let work: string | undefined

afterEach(async () => {
  vi.restoreAllMocks()
  await env?.close()
  env = undefined
  if (work) rmSync(work, { recursive: true, force: true })
  work = undefined
})

/** Input larger than any PTY buffer, with a pattern that shows a lost or reordered byte. */
function patterned(size: number): Buffer {
  const bytes = Buffer.alloc(size)
  for (let index = 0; index < size; index++) bytes[index] = 0x41 + ((index * 7 + (index >> 10)) % 26)
  return bytes
}

describe('input the kernel refuses for a while', () => {
  it('arrives whole and in order once the program starts reading', async () => {
    env = await mountRuntime()
    work = mkdtempSync(join(tmpdir(), 'dsh-pty-writer-'))
    const flag = join(work, 'go')
    const input = patterned(300_000)
    // The program polls for the flag itself: until the test creates it, nothing reads the terminal.
    const script = `stty raw -echo; echo READY; while [ ! -e ${flag} ]; do sleep 0.05; done; head -c ${input.length} | sha256sum`
    const handle = await env.spawn({ argv: ['bash', '-c', script] })
    const out = capture(handle)
    await out.waitFor(/READY/)
    await handle.write(input.subarray(0, 100_000))
    await handle.write(input.subarray(100_000))
    writeFileSync(flag, '')
    const digest = await out.waitFor(/[0-9a-f]{64}/, 0, 20_000)
    expect(digest[0]).toBe(createHash('sha256').update(input).digest('hex'))
  })

  it('is dropped without a write to the closed PTY when the program exits first', async () => {
    env = await mountRuntime()
    const errors = vi.spyOn(console, 'error')
    for (let round = 0; round < 3; round++) {
      const handle = await env.spawn({ argv: ['bash', '-c', 'stty raw -echo; echo READY; exec sleep 100'] })
      await capture(handle).waitFor(/READY/)
      await handle.write(patterned(300_000))
      process.kill(handle.pid, 'SIGKILL')
      await handle.done
      // A retry comes within a few milliseconds: give a queued one time to reach the closed descriptor.
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const ptyErrors = errors.mock.calls.filter((call) => String(call[0]).includes('pty write error'))
    expect(ptyErrors).toEqual([])
  })
})
