import { afterEach, describe, expect, it } from 'vitest'
import { type ForegroundFacts, isNewWait, isStdinWaitProven, type SubprocessTerminalHandle } from 'dsh-subprocess'
import { eventually } from 'dsh-testkit'
import { installed } from 'dsh-testkit'
import { BASH, BASH_ENV, capture, mountRuntime, PYTHON } from './helpers'

let env: Awaited<ReturnType<typeof mountRuntime>> | undefined

afterEach(async () => {
  await env?.close()
  env = undefined
})

/** Inspect until the foreground group is not the shell and is proven waiting on the terminal. */
function provenWait(handle: SubprocessTerminalHandle, what: string): Promise<ForegroundFacts> {
  return eventually(
    async () => {
      const facts = await handle.inspectForeground()
      return facts && !facts.isShellGroup && isStdinWaitProven(facts) ? facts : undefined
    },
    what,
    15_000,
  )
}

async function shellWith(command: string) {
  env = await mountRuntime()
  const shell = await env.spawn({ argv: BASH, env: { ...BASH_ENV, PYTHONSTARTUP: undefined, NODE_OPTIONS: undefined } })
  const out = capture(shell)
  await out.waitFor(/PROMPT\$ $/)
  await shell.write(`${command}\r`)
  return { shell, out }
}

describe.skipIf(process.platform !== 'linux')('stdin-wait proof on real programs', () => {
  it('proves cat blocked in read(0)', async () => {
    const { shell } = await shellWith('cat')
    const facts = await provenWait(shell, 'cat waiting on stdin')
    expect(facts.waits).toHaveLength(1)
    expect(facts.waits[0]).toMatchObject({ syscallName: 'read', fd: 0, tid: facts.waits[0]!.pid })
    expect(facts.complete).toBe(true)
  })

  it('proves python3 -q waiting in select/poll on fd 0, and a new wait after each line', async () => {
    const { shell, out } = await shellWith(`${PYTHON} -q`)
    const before = await provenWait(shell, 'python waiting on stdin')
    expect(['select', 'pselect6', 'poll', 'ppoll', 'read']).toContain(before.waits[0]!.syscallName)
    expect(before.waits[0]!.fd).toBe(0)
    const from = out.length()
    await shell.write('6*7\r')
    await out.waitFor(/42\r\n>>> $/, from)
    const after = await provenWait(shell, 'python waiting again')
    expect(isNewWait(before, after)).toBe(true)
  })

  it('proves the node REPL waiting in epoll with the terminal in its interest list', async () => {
    const { shell, out } = await shellWith('node --no-warnings')
    await out.waitFor(/> $/)
    const facts = await provenWait(shell, 'node waiting on stdin')
    expect(facts.waits[0]!.syscallName).toMatch(/^epoll_(p)?wait2?$/)
    // libuv reopens the tty (Node 20: onto a new fd), so the proof names whichever fd is the terminal.
    expect(facts.waits[0]!.fd).toBeGreaterThanOrEqual(0)
    expect(facts.waits[0]!.tid).toBe(facts.waits[0]!.pid)
    expect(facts.threads.length).toBeGreaterThan(1)
    expect(facts.threads.filter((thread) => thread.state === 'stdin-wait')).toHaveLength(1)
  })

  it('proves a wait in a thread that is not the group leader', async () => {
    const script = 'import sys, threading; t = threading.Thread(target=sys.stdin.readline); t.start(); t.join()'
    const { shell } = await shellWith(`${PYTHON} -c '${script}'`)
    const facts = await provenWait(shell, 'the reader thread waiting on stdin')
    const [wait] = facts.waits
    expect(wait!.tid).not.toBe(wait!.pid)
    expect(wait!.syscallName).toBe('read')
    // The leader is blocked in join() (or momentarily runnable under load), never the stdin waiter.
    expect(facts.waits.map((proven) => proven.tid)).toEqual([wait!.tid])
    expect(facts.threads.some((thread) => thread.tid === thread.pid && thread.state !== 'stdin-wait')).toBe(true)
  })

  it('does not count a wait that existed before the write as new', async () => {
    // cat waits; a background job then prints, so output arrives while cat's wait is untouched.
    const { shell, out } = await shellWith('(sleep 0.3; echo background-noise) & cat')
    const before = await provenWait(shell, 'cat waiting')
    await out.waitFor(/background-noise/)
    const during = await provenWait(shell, 'cat still waiting')
    expect(during.waits[0]!.voluntaryCtxtSwitches).toBe(before.waits[0]!.voluntaryCtxtSwitches)
    expect(isNewWait(before, during)).toBe(false)
    // A partial line (no newline) does not wake a canonical-mode reader either.
    await shell.write('half a line')
    await out.waitFor(/half a line/)
    expect(isNewWait(before, await provenWait(shell, 'cat after partial input'))).toBe(false)
    // The newline completes the line: cat reads it, echoes it and blocks again — a new wait.
    await shell.write('\r')
    await out.waitFor(/half a line\r\nhalf a line\r\n/)
    expect(isNewWait(before, await provenWait(shell, 'cat waiting again'))).toBe(true)
  })

  it('does not prove a wait on a pipe: a pipeline reader is not waiting for the terminal', async () => {
    const { shell } = await shellWith('sleep 30 | cat')
    const facts = await eventually(async () => {
      const sample = await shell.inspectForeground()
      return sample && !sample.isShellGroup && sample.complete && sample.threads.length === 2 && sample.threads.every((t) => t.state === 'blocked')
        ? sample
        : undefined
    }, 'the pipeline blocked')
    expect(isStdinWaitProven(facts)).toBe(false)
  })

  it('reports the timeout of a timed wait (select, poll, epoll) and none for a plain read', async () => {
    const cat = await shellWith('cat')
    expect((await provenWait(cat.shell, 'cat waiting')).waits[0]).not.toHaveProperty('timeoutMs')
    await env?.close()
    const waits: Array<[string, number]> = [
      ['import select,sys; select.select([sys.stdin],[],[],30)', 30_000],
      ['import select; p=select.poll(); p.register(0, select.POLLIN); p.poll(20000)', 20_000],
      ['import select; e=select.epoll(); e.register(0, select.EPOLLIN); e.poll(15)', 15_000],
    ]
    for (const [script, timeoutMs] of waits) {
      const { shell } = await shellWith(`${PYTHON} -c '${script}'`)
      const wait = (await provenWait(shell, `python waiting ${timeoutMs} ms`)).waits[0]!
      // A kernel that rewrote the remaining time would show less; the call's own value is exact.
      expect(wait.timeoutMs).toBeGreaterThan(timeoutMs - 1000)
      expect(wait.timeoutMs).toBeLessThanOrEqual(timeoutMs)
      await env?.close()
      env = undefined
    }
  })

  it.skipIf(!installed('htop'))('proves htop waiting for a key in a poll that wakes it to redraw', async () => {
    const { shell } = await shellWith('TERM=xterm-256color htop -d 20')
    const wait = (await provenWait(shell, 'htop waiting for a key')).waits[0]!
    expect(wait).toMatchObject({ syscallName: expect.stringMatching(/^p?poll$|select|pselect6/), fd: 0 })
    expect(wait.timeoutMs).toBeGreaterThan(0)
    expect(wait.timeoutMs).toBeLessThanOrEqual(2000)
  })

  it.skipIf(!installed('top'))('proves top waiting for a key in a select that wakes it to redraw', async () => {
    const { shell } = await shellWith('TERM=xterm-256color top -d 2')
    const wait = (await provenWait(shell, 'top waiting for a key')).waits[0]!
    expect(wait).toMatchObject({ fd: 0 })
    expect(wait.timeoutMs).toBeGreaterThan(0)
    expect(wait.timeoutMs).toBeLessThanOrEqual(2000)
  })

  it('proves a password prompt reading /dev/tty', async () => {
    const { shell, out } = await shellWith(`${PYTHON} -c 'import getpass; getpass.getpass("pw: ")'`)
    await out.waitFor(/pw: $/)
    const facts = await provenWait(shell, 'getpass waiting on /dev/tty')
    expect(facts.waits[0]!.fd).toBeGreaterThan(2)
  })
})
