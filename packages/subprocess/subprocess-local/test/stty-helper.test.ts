import { chmodSync, existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { eventually, isAlive } from 'dsh-testkit'
import { SttyHelper } from '../src/modes/stty-helper'
import { BASH, BASH_ENV, capture, mountRuntime } from './helpers'

let env: Awaited<ReturnType<typeof mountRuntime>> | undefined
const helpers: SttyHelper[] = []
let scratch: string | undefined

afterEach(async () => {
  for (const helper of helpers.splice(0)) helper.dispose()
  await env?.close()
  env = undefined
  if (scratch) rmSync(scratch, { recursive: true, force: true })
  scratch = undefined
})

function helper(options?: ConstructorParameters<typeof SttyHelper>[1]): SttyHelper {
  const made = new SttyHelper('-F', options)
  helpers.push(made)
  return made
}

/** The device path of a real PTY: the slave a provider shell holds as its stdin. */
async function ptyPath(): Promise<string> {
  env = await mountRuntime()
  const shell = await env.spawn({ argv: BASH, env: BASH_ENV })
  await capture(shell).waitFor(/PROMPT\$ $/)
  return readlinkSync(`/proc/${shell.pid}/fd/0`)
}

describe.skipIf(process.platform !== 'linux')('SttyHelper (one helper shell per runtime)', () => {
  it('answers stty -g for a real PTY, in request order, from one long-lived process', async () => {
    const device = await ptyPath()
    const subject = helper()
    const answers = await Promise.all([subject.read(device), subject.read('/nonexistent/tty'), subject.read(device)])
    expect(answers[0]).toMatch(/^[0-9a-f]+(:[0-9a-f]+){4,}$/)
    expect(answers).toEqual([answers[0], undefined, answers[0]])
    const pid = subject.pid
    await subject.read(device)
    expect(subject.pid).toBe(pid)
  })

  it('replaces a helper that died', async () => {
    const device = await ptyPath()
    const subject = helper()
    expect(await subject.read(device)).toBeDefined()
    const first = subject.pid!
    process.kill(first, 'SIGKILL')
    // Reads racing the death see undefined; once the exit is noticed a new helper answers.
    await eventually(async () => (await subject.read(device)) ?? undefined, 'a read through a new helper')
    expect(subject.pid).not.toBe(first)
  })

  it('gives up on a stuck stty after its bound, killing it with the helper', async () => {
    scratch = mkdtempSync(join(tmpdir(), 'dsh-stty-'))
    const fake = join(scratch, 'stty')
    writeFileSync(fake, `#!/bin/sh\necho $$ > ${join(scratch, 'pid')}\nexec sleep 60\n`)
    chmodSync(fake, 0o755)
    const subject = helper({ path: `${scratch}:/usr/bin:/bin`, replyTimeoutMs: 1000 })
    const answer = subject.read('/dev/null')
    const pidFile = join(scratch, 'pid')
    const stuck = await eventually(() => (existsSync(pidFile) && Number(readFileSync(pidFile, 'utf8'))) || undefined, 'the fake stty started')
    expect(await answer).toBeUndefined()
    await eventually(() => !isAlive(stuck), 'the stuck stty gone with its helper')
    expect(subject.pid).toBeUndefined()
  })

  it('reads nothing without stty, for a path with a newline, or once disposed', async () => {
    const device = await ptyPath()
    const noStty = helper({ path: '/nonexistent' })
    expect(await noStty.read(device)).toBeUndefined()
    const subject = helper()
    expect(await subject.read(`${device}\n/dev/null`)).toBeUndefined()
    expect(subject.pid).toBeUndefined()
    expect(await subject.read(device)).toBeDefined()
    const pid = subject.pid!
    subject.dispose()
    expect(await subject.read(device)).toBeUndefined()
    await eventually(() => !isAlive(pid), 'the disposed helper gone')
  })
})
