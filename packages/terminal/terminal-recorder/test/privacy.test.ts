import { randomBytes } from 'node:crypto'
import { chmod, mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { TerminalHumanView } from 'dsh-terminal'
import { eventually } from 'dsh-testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { parseAsciicast } from '../src/index'
import { REDACTED } from '../src/redaction'
import { PERSON_INPUT_PLACEHOLDER, SECRET_INPUT_PLACEHOLDER } from '../src/session-recording'
import { onlyRecording, scratchDir, startRecorderStack } from './stack'

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function recordsDir(): Promise<string> {
  const scratch = await scratchDir('dsh-rec-')
  cleanups.push(scratch.remove)
  return join(scratch.dir, 'recordings')
}

/** Every file under `dir`, concatenated: a secret must be in none of them. */
async function everything(dir: string): Promise<string> {
  const names = await readdir(dir)
  return (await Promise.all(names.map((name) => readFile(join(dir, name), 'utf8')))).join('\n')
}

describe('what a recording never holds', () => {
  it('neither the answer the agent typed to read -s nor the password a person typed through the handoff', async () => {
    const dir = await recordsDir()
    const s = await startRecorderStack({ dir })
    cleanups.push(() => s.dispose())
    const id = await s.open()
    const agentSecret = `agent-pw-${randomBytes(6).toString('hex')}`
    const personSecret = `person-pw-${randomBytes(6).toString('hex')}`

    // The agent answers a read -s prompt it was told is a password prompt.
    const asked = await s.run(id, "read -s -p 'Password: ' answer")
    expect(asked.input?.kind).toBe('password')
    await s.run(id, agentSecret)
    const checked = await s.run(id, 'echo "agent typed ${#answer} characters"')
    expect(checked.viewport).toContain(`agent typed ${agentSecret.length} characters`)

    // A person takes over and types the password themselves (the secret handoff).
    const handedOver = await s.run(id, 'read -s -p \'Passphrase: \' phrase; echo "person typed ${#phrase} characters"')
    expect(handedOver.input?.kind).toBe('password')
    const shown: Buffer[] = []
    const view: TerminalHumanView = await s.terminals.observeAsHuman(s.agent, id, { onOutput: (bytes) => shown.push(Buffer.from(bytes)), onEnd: () => {} })
    view.takeWrite()
    for (const key of `${personSecret}\r`) await view.write(key)
    await eventually(() => Buffer.concat(shown).toString().includes(`person typed ${personSecret.length} characters`), 'the shell read what the person typed')
    view.close()
    // The send after the prompt stays a placeholder (the recorder cannot tell whether the person
    // answered it); the one after that, at the shell's prompt again, is recorded.
    await s.run(id, 'echo done')
    await s.run(id, 'echo again')
    await s.close(id)

    const { text } = await onlyRecording(s.recorder)
    const all = await everything(dir)
    expect(all).not.toContain(agentSecret)
    expect(all).not.toContain(personSecret)
    const inputs = parseAsciicast(text)
      .events.filter((event) => event.code === 'i')
      .map((event) => event.data)
    expect(inputs.filter((input) => input === SECRET_INPUT_PLACEHOLDER)).toHaveLength(2)
    // One placeholder for the person's whole stretch of typing, not one per key.
    expect(inputs.filter((input) => input === PERSON_INPUT_PLACEHOLDER)).toHaveLength(1)
    expect(inputs.at(-1)).toBe('echo again\r')
    expect(inputs).not.toContain('echo done\r')
  })

  it('no value the environment scrub drops, wherever it is typed or printed, nor any other variable in the header', async () => {
    const secret = `ghp_${randomBytes(16).toString('hex')}`
    process.env.RECORDER_TEST_API_TOKEN = secret
    cleanups.push(async () => {
      delete process.env.RECORDER_TEST_API_TOKEN
    })
    const dir = await recordsDir()
    const s = await startRecorderStack({ dir })
    cleanups.push(() => s.dispose())
    const id = await s.open()
    // Typed, echoed and printed in pieces: the output stream carries it across chunk boundaries too.
    const printed = await s.run(id, `printf '%s' ${secret.slice(0, 9)}; sleep 0.2; printf '%s\\n' ${secret.slice(9)}`)
    expect(printed.viewport).toContain(secret)
    await s.close(id)
    const { text } = await onlyRecording(s.recorder)
    expect(text).not.toContain(secret)
    expect(text).toContain(REDACTED)
    expect(Object.keys(parseAsciicast(text).header.env ?? {})).toEqual(['TERM'])
  })
})

describe('the recording directory', () => {
  it('removes recordings older than retentionDays when it starts, keeps newer ones and other files, and tightens the directory to 0700', async () => {
    const dir = await recordsDir()
    await mkdir(dir, { mode: 0o755 })
    await chmod(dir, 0o755)
    const old = join(dir, '2020-01-01T00-00-00.000Z_pty-1_1.cast')
    const recent = join(dir, '2026-01-01T00-00-00.000Z_pty-2_1.cast')
    const other = join(dir, 'notes.txt')
    for (const path of [old, recent, other]) await writeFile(path, '{}\n')
    const tenDaysAgo = new Date(Date.now() - 10 * 24 * 3600 * 1000)
    await utimes(old, tenDaysAgo, tenDaysAgo)
    await utimes(other, tenDaysAgo, tenDaysAgo)
    const s = await startRecorderStack({ dir, retentionDays: 7 })
    cleanups.push(() => s.dispose())
    expect((await readdir(dir)).sort()).toEqual(['2026-01-01T00-00-00.000Z_pty-2_1.cast', 'notes.txt'])
    expect((await stat(dir)).mode & 0o777).toBe(0o700)
    expect(await s.recorder.list()).toEqual(['2026-01-01T00-00-00.000Z_pty-2_1.cast'])
    await expect(s.recorder.read('../notes.txt')).rejects.toMatchObject({ code: 'NO_RECORDING' })
  })

  it('ends the recording of a running session with a marker when the recorder unloads; the session goes on unrecorded', async () => {
    const dir = await recordsDir()
    const s = await startRecorderStack({ dir })
    cleanups.push(() => s.dispose())
    const id = await s.open()
    await s.run(id, 'echo before-unload')
    // The writer thread creates the file when it takes the session's first batch.
    await eventually(async () => (await s.recorder.list()).length === 1, 'the recording file')
    const { name } = await onlyRecording(s.recorder)
    await s.unloadRecorder()
    expect((await s.run(id, 'echo after-unload')).viewport).toContain('after-unload')
    const cast = parseAsciicast(await readFile(join(dir, name), 'utf8'))
    expect(cast.skippedLines).toBe(0)
    expect(cast.events.at(-1)).toMatchObject({ code: 'm', data: 'recording stopped: the recorder was unloaded' })
    expect(cast.events.some((event) => event.data.includes('before-unload'))).toBe(true)
    expect(cast.events.some((event) => event.data.includes('after-unload'))).toBe(false)
  })
})
