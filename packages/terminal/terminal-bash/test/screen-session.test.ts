import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { childWaiting, prompt } from './support/fake-terminal'
import { openFake, tick } from './support/fake-session'

// Which chunk a query arrives in, relative to the prompt, is a race a real PTY cannot stage: a fake handle can.
beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

describe('a session answering terminal queries', () => {
  it('answers a query while a command runs, and drops one the prompt already followed', async () => {
    const { fake, session } = await openFake()
    const send = session.startSend({ text: 'ask', submit: true })
    await tick(1)
    expect(fake.writes).toEqual(['ask\r'])
    fake.foreground = childWaiting()
    fake.emit('ask\r\n\x1b[6n')
    await tick(1)
    // "welcome", then the prompt line with the echo, then the query on row 3.
    expect(fake.writes).toEqual(['ask\r', '\x1b[3;1R'])
    // The asker exited before the emulator got to its second query; the shell reads a command line now.
    fake.emit(`\x1b[6n\r\n${prompt(0)}`)
    await tick(1)
    expect(fake.writes).toEqual(['ask\r', '\x1b[3;1R'])
    send.cancel()
    await tick(1_000)
  })

  it('renders the screen on demand and stops answering once closing', async () => {
    const { fake, session } = await openFake()
    expect(await session.screen()).toMatchObject({ lines: ['welcome', 'dsh>'], cursor: { row: 2, col: 6 }, size: { rows: 40, cols: 160 } })
    const closing = session.close('test')
    await expect(session.screen()).rejects.toMatchObject({ code: 'SESSION_CLOSED' })
    fake.emit('\x1b[c')
    await tick(1)
    expect(fake.writes).toEqual([])
    await closing
  })
})
