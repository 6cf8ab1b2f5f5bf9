import { installed } from 'dsh-testkit'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { type ForegroundFacts, isStdinWaitProven, type SubprocessTerminalHandle } from 'dsh-subprocess'
import { eventually } from 'dsh-testkit'
import { BASH, BASH_ENV, capture, mountRuntime, PYTHON } from './helpers'

// The facts a backend needs to say why a session waits, read from real programs under a real PTY:
// the terminal's echo/canonical flags, the program in front, and what it does when it does not read.

let env: Awaited<ReturnType<typeof mountRuntime>> | undefined
let scratch: string | undefined

afterEach(async () => {
  await env?.close()
  env = undefined
  if (scratch) rmSync(scratch, { recursive: true, force: true })
  scratch = undefined
})

async function shellWith(command: string, term = 'dumb') {
  env = await mountRuntime()
  const shell = await env.spawn({ argv: BASH, env: { ...BASH_ENV, TERM: term, PYTHONSTARTUP: undefined, NODE_OPTIONS: undefined } })
  const out = capture(shell)
  await out.waitFor(/PROMPT\$ $/)
  await shell.write(`${command}\r`)
  return { shell, out }
}

/** Inspect until `ready` holds; the flags are read by a later inspection, once the program has set them. */
async function until(handle: SubprocessTerminalHandle, what: string, ready: (facts: ForegroundFacts) => boolean): Promise<ForegroundFacts> {
  return eventually(
    async () => {
      const facts = await handle.inspectForeground()
      return facts && ready(facts) ? facts : undefined
    },
    what,
    15_000,
  )
}

/**
 * The flags, read while the thread proven waiting in `facts` stayed in that very wait: a plain
 * inspection before and after the one with the flags shows the same wait with the same switch
 * counters, so the thread did not run (and could not change the flags) while they were read. A
 * program that wakes on a timer (vim, top) just makes another round.
 */
async function modesDuring(handle: SubprocessTerminalHandle, facts: ForegroundFacts) {
  const { tid } = facts.waits[0]!
  const waitOf = (sample: ForegroundFacts | undefined) => sample?.waits.find((wait) => wait.tid === tid)
  return eventually(
    async () => {
      const before = waitOf(await handle.inspectForeground())
      const read = await handle.inspectForeground({ terminalModes: true })
      const after = waitOf(await handle.inspectForeground())
      const same = [waitOf(read), after].every(
        (wait) =>
          wait && before && wait.voluntaryCtxtSwitches === before.voluntaryCtxtSwitches && wait.nonvoluntaryCtxtSwitches === before.nonvoluntaryCtxtSwitches,
      )
      return same ? read?.terminalModes : undefined
    },
    'the flags read inside one wait',
    15_000,
  )
}

/** bash's `read` builtin blocked in read(2), not readline's pselect6 at the prompt. */
const builtinReading = (facts: ForegroundFacts) => facts.isShellGroup && facts.waits[0]?.syscallName === 'read'

/** A proven wait held by `command`, outside the shell's group. */
const programWaiting = (command: string) => (facts: ForegroundFacts) =>
  !facts.isShellGroup && isStdinWaitProven(facts) && facts.program?.command === command && facts.program.role === 'waiting'

/** Every thread of `command`'s group sampled and off-CPU: the group settled into its blocking syscalls. */
const settled = (command: string, members: number) => (facts: ForegroundFacts) =>
  !facts.isShellGroup &&
  facts.complete &&
  facts.program?.command === command &&
  new Set(facts.threads.map((thread) => thread.pid)).size === members &&
  facts.threads.every((thread) => thread.state === 'blocked')

describe.skipIf(process.platform !== 'linux')('terminal modes of real programs', () => {
  it('read -s: echo off, canonical on', async () => {
    const { shell } = await shellWith('read -s secret')
    const facts = await until(shell, 'read -s blocked in read(2)', builtinReading)
    expect(await modesDuring(shell, facts)).toEqual({ echo: false, canonical: true })
  })

  it('read -n1: canonical off, echo on', async () => {
    const { shell } = await shellWith('read -n1 key')
    const facts = await until(shell, 'read -n1 blocked in read(2)', builtinReading)
    expect(await modesDuring(shell, facts)).toEqual({ echo: true, canonical: false })
  })

  it('read -p: echo and canonical on', async () => {
    const { shell } = await shellWith("read -p 'name: ' name")
    const facts = await until(shell, 'read -p blocked in read(2)', builtinReading)
    expect(await modesDuring(shell, facts)).toEqual({ echo: true, canonical: true })
  })

  it('cat: echo and canonical on', async () => {
    const { shell } = await shellWith('cat')
    const facts = await until(shell, 'cat waiting', programWaiting('cat'))
    expect(facts.program).toMatchObject({ argv0: 'cat' })
    expect(await modesDuring(shell, facts)).toEqual({ echo: true, canonical: true })
  })

  it('bash at its prompt: readline edits in raw mode, so the flags alone do not tell it from a key reader', async () => {
    env = await mountRuntime()
    const shell = await env.spawn({ argv: BASH, env: BASH_ENV })
    await capture(shell).waitFor(/PROMPT\$ $/)
    const facts = await until(shell, 'readline waiting', (sample) => sample.isShellGroup && isStdinWaitProven(sample))
    expect(facts.program).toMatchObject({ pid: shell.pid, role: 'waiting', command: 'bash', argv0: 'bash' })
    expect(await modesDuring(shell, facts)).toEqual({ echo: false, canonical: false })
  })

  it('python getpass: echo off on /dev/tty', async () => {
    const { shell, out } = await shellWith(`${PYTHON} -c 'import getpass; getpass.getpass("pw: ")'`)
    await out.waitFor(/pw: $/)
    const facts = await until(shell, 'getpass waiting on /dev/tty', programWaiting(basename(PYTHON).slice(0, 15)))
    expect(facts.waits[0]!.fd).toBeGreaterThan(2)
    expect((await modesDuring(shell, facts))?.echo).toBe(false)
  })

  it.skipIf(!installed('ssh-keygen'))('ssh-keygen at its passphrase prompt: echo off', async () => {
    scratch = mkdtempSync(join(tmpdir(), 'dsh-keygen-'))
    const { shell, out } = await shellWith(`ssh-keygen -q -t ed25519 -f ${join(scratch, 'key')}`)
    await out.waitFor(/passphrase/i)
    const facts = await until(shell, 'ssh-keygen waiting for a passphrase', programWaiting('ssh-keygen'))
    expect(facts.program).toMatchObject({ argv0: 'ssh-keygen' })
    expect(await modesDuring(shell, facts)).toEqual({ echo: false, canonical: true })
  })

  it('leaves the flags out unless asked', async () => {
    const { shell } = await shellWith('cat')
    const facts = await until(shell, 'cat waiting', programWaiting('cat'))
    expect(facts.terminalModes).toBeUndefined()
  })
})

describe.skipIf(process.platform !== 'linux')('the program in front of real terminals', () => {
  it('sleep 30: named, blocked in clock_nanosleep, proven not reading the terminal', async () => {
    const { shell } = await shellWith('sleep 30')
    const facts = await until(shell, 'sleep blocked', settled('sleep', 1))
    expect(isStdinWaitProven(facts)).toBe(false)
    expect(facts.notReadingProven).toBe(true)
    expect(facts.threads).toHaveLength(1)
    expect(['clock_nanosleep', 'nanosleep']).toContain(facts.threads[0]!.syscallName)
    expect(facts.threads[0]!.notReading).toBe(true)
    expect(facts.program).toMatchObject({ pid: facts.processGroupId, role: 'leader', command: 'sleep', argv0: 'sleep' })
    // Its age grows from one inspection to the next (10 ms resolution: it never goes back).
    const later = await shell.inspectForeground()
    expect(later!.program!.started).toBe(facts.program!.started)
    expect(later!.program!.elapsedMs!).toBeGreaterThanOrEqual(facts.program!.elapsedMs!)
  })

  it("bash -c 'sleep 30 & wait': the leader waits for its child, the child sleeps", async () => {
    const { shell } = await shellWith("bash -c 'sleep 30 & wait'")
    const facts = await until(shell, 'the job blocked', settled('bash', 2))
    const leader = facts.threads.find((thread) => thread.pid === facts.processGroupId)!
    const child = facts.threads.find((thread) => thread.pid !== facts.processGroupId)!
    expect(['wait4', 'waitid']).toContain(leader.syscallName)
    expect(['clock_nanosleep', 'nanosleep']).toContain(child.syscallName)
    expect(facts).toMatchObject({ stdinWaitProof: 'unproven', notReadingProven: true })
    expect(facts.program).toMatchObject({ role: 'leader', command: 'bash', argv0: 'bash' })
  })

  it('a pipeline reader on a pipe is not reading the terminal either', async () => {
    const { shell } = await shellWith('sleep 30 | cat')
    const facts = await until(shell, 'the pipeline blocked', settled('sleep', 2))
    const cat = facts.threads.find((thread) => thread.syscallName === 'read')
    expect(cat).toMatchObject({ state: 'blocked', notReading: true })
    expect(facts.notReadingProven).toBe(true)
  })

  it('names the python REPL by comm and argv[0]', async () => {
    const { shell } = await shellWith(`${PYTHON} -q`)
    const facts = await until(shell, 'python waiting', programWaiting(basename(PYTHON).slice(0, 15)))
    expect(facts.program).toMatchObject({ argv0: basename(PYTHON) })
    expect(facts.program!.elapsedMs).toBeGreaterThanOrEqual(0)
    // In the host's pid namespace: the pid it sees itself is `pid`.
    expect(facts.program!.namespacePid).toBeUndefined()
    expect(facts.notReadingProven).toBe(false)
  })

  it('a REPL in a pid namespace of its own: the pid it sees itself is its namespace pid', async () => {
    const { shell, out } = await shellWith(`unshare --pid --fork --user --map-root-user ${PYTHON} -qi -c 'import os; print("INSIDE", os.getpid(), "END")'`)
    const inside = Number((await out.waitFor(/INSIDE (\d+) END/))[1])
    const facts = await until(shell, 'python waiting', programWaiting(basename(PYTHON).slice(0, 15)))
    expect(facts.program!.namespacePid).toBe(inside)
    expect(facts.program!.pid).not.toBe(inside)
  })

  it('names the node REPL, whose other threads are proven idle', async () => {
    const { shell, out } = await shellWith('node --no-warnings')
    await out.waitFor(/> $/)
    const facts = await until(shell, 'node waiting', programWaiting('node'))
    expect(facts.program).toMatchObject({ argv0: 'node' })
    const others = facts.threads.filter((thread) => thread.state !== 'stdin-wait')
    // Workers park in futex or their own epoll; a waiting main thread means not all are "not reading".
    expect(others.some((thread) => thread.syscallName === 'futex' && thread.notReading)).toBe(true)
    expect(facts.notReadingProven).toBe(false)
  })
})

describe.skipIf(process.platform !== 'linux')('full-screen programs wait for keys in ways the proof covers', () => {
  it.skipIf(!installed('vim'))('vim: a proven wait on the terminal, canonical and echo off', async () => {
    const { shell } = await shellWith('vim -u NONE -N -n', 'xterm-256color')
    const facts = await until(shell, 'vim waiting for keys', programWaiting('vim'))
    expect(['select', 'pselect6', 'poll', 'ppoll', 'read']).toContain(facts.waits[0]!.syscallName)
    expect(await modesDuring(shell, facts)).toEqual({ echo: false, canonical: false })
  })

  it.skipIf(!installed('less'))('less: a proven wait on /dev/tty, canonical and echo off', async () => {
    const { shell } = await shellWith('less /etc/passwd', 'xterm-256color')
    const facts = await until(shell, 'less waiting for keys', programWaiting('less'))
    expect(facts.waits[0]!.fd).toBeGreaterThan(2)
    expect(await modesDuring(shell, facts)).toEqual({ echo: false, canonical: false })
  })

  it.skipIf(!installed('top'))('top: a proven wait on the terminal between refreshes, canonical and echo off', async () => {
    const { shell } = await shellWith('top -d 30', 'xterm-256color')
    const facts = await until(shell, 'top waiting for keys', programWaiting('top'))
    expect(await modesDuring(shell, facts)).toEqual({ echo: false, canonical: false })
  })
})
