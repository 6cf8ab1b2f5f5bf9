import { spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import type { SubprocessTerminalHandle } from 'dsh-subprocess'
import { TermiosModes } from '../src/internal'
import { eventually, isAlive, processName } from 'dsh-testkit'
import { modesPlan } from '../src/modes/modes-plan'
import { PerlTermiosHelper, parseTermiosReply, TERMIOS_GREETING } from '../src/modes/perl-termios-helper'
import { BASH, BASH_ENV, capture, mountRuntime } from './helpers'

// The default flags source: tcgetattr in one long-lived perl, stty -g in one helper shell where that
// perl is missing or fails. Real PTYs, real perl and stty; fake perls are small sh scripts.

let env: Awaited<ReturnType<typeof mountRuntime>> | undefined
const disposables: Array<{ dispose(): void }> = []
let scratch: string | undefined

afterEach(async () => {
  for (const item of disposables.splice(0)) item.dispose()
  await env?.close()
  env = undefined
  if (scratch) rmSync(scratch, { recursive: true, force: true })
  scratch = undefined
})

function own<T extends { dispose(): void }>(item: T): T {
  disposables.push(item)
  return item
}

/** A provider bash that ran `command` (`cat` after a `stty` change), and its PTY's device path. */
async function terminalRunning(command: string): Promise<{ handle: SubprocessTerminalHandle; device: string }> {
  env ??= await mountRuntime()
  const handle = await env.spawn({ argv: BASH, env: BASH_ENV })
  const out = capture(handle)
  await out.waitFor(/PROMPT\$ $/)
  await handle.write(`${command}\r`)
  return { handle, device: readlinkSync(`/proc/${handle.pid}/fd/0`) }
}

/** An executable sh script standing in for perl (it is run as `<script> -e <perl code>`). */
function fakePerl(body: string): string {
  scratch ??= mkdtempSync(join(tmpdir(), 'dsh-perl-'))
  const file = join(scratch, `perl-${Math.random().toString(36).slice(2)}`)
  writeFileSync(file, `#!/bin/sh\n${body}\n`)
  chmodSync(file, 0o755)
  return file
}

/** Pids a fake perl appended to `file`, one a line, once each start. */
function startedPids(file: string): number[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number)
  } catch {
    return []
  }
}

describe('modesPlan (which helpers a platform runs)', () => {
  it('macOS: the system perl, then BSD stty -f, both on the system PATH, whatever the host PATH says', () => {
    expect(modesPlan('darwin', 'arm64', '/opt/homebrew/bin:/usr/bin')).toEqual({
      bits: { echo: 0x8, canonical: 0x100 },
      perl: { file: '/usr/bin/perl', path: '/bin:/usr/bin' },
      stty: { deviceOption: '-f', path: '/bin:/usr/bin' },
    })
  })

  it('Linux: perl and GNU/busybox stty -F from the host PATH; PowerPC keeps the BSD bit layout for stty', () => {
    expect(modesPlan('linux', 'x64', '/usr/local/bin:/usr/bin')).toEqual({
      bits: { echo: 0o10, canonical: 0o2 },
      perl: { file: 'perl', path: '/usr/local/bin:/usr/bin' },
      stty: { deviceOption: '-F', path: '/usr/local/bin:/usr/bin' },
    })
    expect(modesPlan('linux', 'ppc64', '/usr/bin')?.bits).toEqual({ echo: 0x8, canonical: 0x100 })
  })

  it('nothing where the termios layout is unknown, and a source there starts nothing', async () => {
    expect(modesPlan('win32', 'x64')).toBeUndefined()
    expect(modesPlan('freebsd', 'x64')).toBeUndefined()
    const modes = own(new TermiosModes({ platform: 'win32' }))
    expect(await modes.read('/dev/null', undefined)).toBeUndefined()
    expect(modes.via).toBeUndefined()
    expect(modes.pids).toEqual([])
  })
})

describe('parseTermiosReply', () => {
  it('reads the two flag letters; an empty line means no terminal there; anything else is no answer', () => {
    expect(parseTermiosReply('ec')).toEqual({ echo: true, canonical: true })
    expect(parseTermiosReply('-c')).toEqual({ echo: false, canonical: true })
    expect(parseTermiosReply('e-')).toEqual({ echo: true, canonical: false })
    expect(parseTermiosReply('--')).toEqual({ echo: false, canonical: false })
    expect(parseTermiosReply('')).toBe('unreadable')
    expect(parseTermiosReply(undefined)).toBeUndefined()
    expect(parseTermiosReply('500:5:bf:8a3b')).toBeUndefined()
    expect(parseTermiosReply('ecx')).toBeUndefined()
  })
})

describe.skipIf(process.platform !== 'linux')('PerlTermiosHelper (tcgetattr without a fork)', () => {
  it('reads echo off (stty -echo) from a real PTY, in request order, from one long-lived perl', async () => {
    const { device } = await terminalRunning('stty -echo; cat')
    const perl = own(new PerlTermiosHelper())
    await eventually(async () => {
      const modes = await perl.read(device)
      return typeof modes === 'object' && !modes.echo && modes.canonical
    }, 'echo off under cat')
    const pid = perl.pid!
    expect(processName(pid)).toBe('perl')
    const answers = await Promise.all([perl.read(device), perl.read('/nonexistent/tty'), perl.read('/dev/null'), perl.read(device)])
    expect(answers).toEqual([{ echo: false, canonical: true }, 'unreadable', 'unreadable', { echo: false, canonical: true }])
    expect(perl.pid).toBe(pid)
  })

  it('reads canonical off (stty -icanon) from a real PTY', async () => {
    const { device } = await terminalRunning('stty -icanon; cat')
    const perl = own(new PerlTermiosHelper())
    await eventually(async () => {
      const modes = await perl.read(device)
      return typeof modes === 'object' && modes.echo && !modes.canonical
    }, 'canonical off under cat')
  })

  it('opens the PTY without making it the helper’s controlling terminal (the helper leads a session of its own)', async () => {
    const { device } = await terminalRunning('cat')
    const perl = own(new PerlTermiosHelper())
    expect(await perl.read(device)).toBeTypeOf('object')
    const stat = readFileSync(`/proc/${perl.pid}/stat`, 'latin1')
    const [, , pgrp, session, ttyNr] = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number)
    expect([pgrp, session]).toEqual([perl.pid, perl.pid])
    expect(ttyNr).toBe(0)
  })

  it('refuses a path with a newline without starting perl, and answers nothing once disposed', async () => {
    const perl = own(new PerlTermiosHelper())
    expect(await perl.read('/dev/null\n/dev/null')).toBeUndefined()
    expect(perl.pid).toBeUndefined()
    expect(await perl.read('/dev/null')).toBe('unreadable')
    const pid = perl.pid!
    perl.dispose()
    expect(await perl.read('/dev/null')).toBeUndefined()
    await eventually(() => !isAlive(pid), 'the disposed perl gone')
  })
})

describe.skipIf(process.platform !== 'linux')('TermiosModes (perl first, stty as the fallback)', () => {
  it('reads through perl inside inspectForeground, and starts no stty helper', async () => {
    const modes = new TermiosModes()
    env = await mountRuntime({}, { modes })
    const { handle } = await terminalRunning('stty -echo; cat')
    await eventually(async () => {
      const read = (await handle.inspectForeground({ terminalModes: true }))?.terminalModes
      return read && !read.echo && read.canonical
    }, 'echo off under cat, through the handle')
    expect(modes.via).toBe('perl')
    expect(modes.pids.map(processName)).toEqual(['perl'])
  })

  it('the macOS plan runs the system /usr/bin/perl (runnable on Linux too)', async () => {
    const { device } = await terminalRunning('stty -echo; cat')
    const modes = own(new TermiosModes({ platform: 'darwin', arch: 'arm64' }))
    await eventually(async () => (await modes.read(device, undefined))?.echo === false, 'echo off through /usr/bin/perl')
    expect(modes.pids.map((pid) => readlinkSync(`/proc/${pid}/exe`))).toEqual([realpathSync('/usr/bin/perl')])
  })

  it('falls back to stty when perl is missing, and stays there without retrying perl', async () => {
    const { device } = await terminalRunning('stty -icanon; cat')
    const modes = own(new TermiosModes({ perl: '/nonexistent/perl' }))
    expect(modes.via).toBe('perl')
    await eventually(async () => {
      const read = await modes.read(device, undefined)
      return read && read.echo && !read.canonical
    }, 'canonical off through stty')
    expect(modes.via).toBe('stty')
    expect(modes.pids.map(processName)).toEqual(['sh'])
  })

  it('falls back to stty when the perl found is not one that greets (wrong program, or no POSIX), and ends it', async () => {
    const { device } = await terminalRunning('stty -echo; cat')
    scratch = mkdtempSync(join(tmpdir(), 'dsh-perl-'))
    const pidFile = join(scratch, 'pids')
    for (const body of [`echo $$ >> ${pidFile}\necho hello\nexec sleep 60`, `echo "Can't locate POSIX.pm in @INC" >&2\nexit 2`]) {
      const modes = own(new TermiosModes({ perl: fakePerl(body) }))
      await eventually(async () => {
        const read = await modes.read(device, undefined)
        return read && !read.echo && read.canonical
      }, 'echo off through stty')
      expect(modes.via).toBe('stty')
    }
    const [impostor] = startedPids(pidFile)
    await eventually(() => !isAlive(impostor!), 'the impostor perl killed')
  })

  it('replaces a stuck perl: the stuck read is answered by stty, the next one by a new perl', async () => {
    const { device } = await terminalRunning('stty -echo; cat')
    const stty = own(new TermiosModes({ perl: '/nonexistent/perl' }))
    await eventually(async () => (await stty.read(device, undefined))?.echo === false, 'echo off under cat')
    scratch ??= mkdtempSync(join(tmpdir(), 'dsh-perl-'))
    const pidFile = join(scratch, 'pids')
    // Answers its first request with a made-up `e-` (so the path taken shows), then hangs.
    const perl = fakePerl(`echo '${TERMIOS_GREETING}'\necho $$ >> ${pidFile}\nread d\necho e-\nread d\nexec sleep 60`)
    const modes = own(new TermiosModes({ perl, replyTimeoutMs: 1000 }))
    expect(await modes.read(device, undefined)).toEqual({ echo: true, canonical: false })
    const [stuck] = startedPids(pidFile)
    expect(await modes.read(device, undefined)).toEqual({ echo: false, canonical: true })
    await eventually(() => !isAlive(stuck!), 'the stuck perl killed')
    expect(modes.via).toBe('perl')
    expect(await modes.read(device, undefined)).toEqual({ echo: true, canonical: false })
    expect(startedPids(pidFile)).toHaveLength(2)
  })

  it('gives perl up after three unanswered reads in a row', async () => {
    const { device } = await terminalRunning('stty -echo; cat')
    const stty = own(new TermiosModes({ perl: '/nonexistent/perl' }))
    await eventually(async () => (await stty.read(device, undefined))?.echo === false, 'echo off under cat')
    const perl = fakePerl(`echo '${TERMIOS_GREETING}'\nexec sleep 60`)
    const modes = own(new TermiosModes({ perl, replyTimeoutMs: 200 }))
    for (let i = 0; i < 3; i++) {
      expect(modes.via).toBe('perl')
      expect(await modes.read(device, undefined)).toEqual({ echo: false, canonical: true })
    }
    expect(modes.via).toBe('stty')
    expect(await modes.read(device, undefined)).toEqual({ echo: false, canonical: true })
    expect(modes.pids.map(processName)).toEqual(['sh'])
  })

  it('answers nothing for a path that is not the expected terminal, or with a newline, and starts nothing for them', async () => {
    const { device } = await terminalRunning('cat')
    const modes = own(new TermiosModes())
    expect(await modes.read(device, 1)).toBeUndefined()
    expect(await modes.read(`${device}\n/dev/null`, undefined)).toBeUndefined()
    expect(modes.pids).toEqual([])
    expect(await modes.read('/dev/null', undefined)).toBeUndefined()
    expect(modes.via).toBe('perl')
  })

  it('leaves no helper behind: disposing the runtime ends perl and the stty shell', async () => {
    const modes = new TermiosModes({ perl: fakePerl(`echo '${TERMIOS_GREETING}'\nread d\necho ec\nread d\nexec sleep 60`), replyTimeoutMs: 1000 })
    env = await mountRuntime({}, { modes })
    const { handle } = await terminalRunning('cat')
    expect((await handle.inspectForeground({ terminalModes: true }))?.terminalModes).toEqual({ echo: true, canonical: true })
    // The second read hangs the fake perl (replaced on the next read) and starts stty; the third starts a new perl.
    expect((await handle.inspectForeground({ terminalModes: true }))?.terminalModes).toEqual({ echo: true, canonical: true })
    expect((await handle.inspectForeground({ terminalModes: true }))?.terminalModes).toEqual({ echo: true, canonical: true })
    const pids = modes.pids
    expect(pids).toHaveLength(2)
    await env.close()
    env = undefined
    expect(modes.pids).toEqual([])
    await eventually(() => pids.every((pid) => !isAlive(pid)), 'both helpers gone')
  })
})

describe.skipIf(process.platform !== 'linux')('an idle perl helper and its host', () => {
  it('does not keep the host alive, and leaves when the host is gone', async () => {
    const tsx = createRequire(import.meta.url).resolve('tsx/cli')
    const fixture = fileURLToPath(new URL('./fixtures/idle-modes-host.ts', import.meta.url))
    const host = spawn(process.execPath, [tsx, '--conditions=dsh-source', fixture], { stdio: ['ignore', 'pipe', 'inherit'] })
    let stdout = ''
    host.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    const code = await new Promise<number | null>((resolve) => host.on('exit', resolve))
    expect(code).toBe(0)
    const report = JSON.parse(stdout.trim()) as { pids: number[]; via: string; answer: null }
    expect(report).toMatchObject({ via: 'perl', answer: null })
    expect(report.pids).toHaveLength(1)
    await eventually(() => !isAlive(report.pids[0]!), 'the helper gone with its host')
  })
})
