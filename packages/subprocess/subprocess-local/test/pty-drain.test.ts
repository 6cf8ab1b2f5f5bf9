import { afterEach, describe, expect, it } from 'vitest'
import { mountRuntime } from './helpers'

let env: Awaited<ReturnType<typeof mountRuntime>> | undefined

afterEach(async () => {
  await env?.close()
  env = undefined
})

// node-pty reports an exit 200 ms after the child's at the latest, destroying its read stream even
// when that stream did not read everything (paused for back-pressure, or a loop too busy to read).
describe('output still unread when the program exits', () => {
  it('reaches the first subscriber whole although the PTY was paused for its backlog when the program exited', async () => {
    // A backlog of one byte pauses the PTY at the first chunk; the rest stays in the kernel while the program exits.
    env = await mountRuntime({ backlogBytes: 1 })
    const handle = await env.spawn({ argv: ['sh', '-c', 'printf a; sleep 0.2; head -c 3000 /dev/zero | tr "\\0" x; printf "[end]"; exit 3'] })
    const exit = await handle.done
    let received = ''
    handle.onOutput((chunk) => {
      received += chunk.toString('latin1')
    })
    expect(exit).toEqual({ exitCode: 3, signal: null })
    expect(received).toBe(`a${'x'.repeat(3000)}[end]`)
  })

  it('reaches a subscriber that held the PTY (a session host client that stopped reading) whole, in order, before done', async () => {
    env = await mountRuntime()
    const handle = (await env.spawn({ argv: ['sh', '-c', 'printf first; sleep 0.3; seq 1 400; exit 4'] })) as Awaited<
      ReturnType<NonNullable<typeof env>['spawn']>
    > & { pauseOutput(): void; resumeOutput(): void }
    let received = ''
    handle.onOutput((chunk) => {
      received += chunk.toString('latin1')
      // Hold the PTY after the first chunk, as a session host does when its client's window is full.
      handle.pauseOutput()
    })
    const exit = await handle.done
    const seq = Array.from({ length: 400 }, (_, index) => `${index + 1}\r\n`).join('')
    expect(exit).toEqual({ exitCode: 4, signal: null })
    expect(received).toBe(`first${seq}`)
  })
})
