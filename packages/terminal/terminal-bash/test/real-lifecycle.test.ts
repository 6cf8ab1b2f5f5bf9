import { afterEach, describe, expect, it } from 'vitest'
import { commandLine, eventually, foregroundGroup, isAlive, processesRunning, processName } from 'dsh-testkit'
import { labelledNumbers, PATIENT, startStack, type Stack } from './support/stack'

let stack: Stack | undefined
afterEach(async () => {
  await stack?.dispose()
  stack = undefined
})

describe('signals and cancellation on a real shell', () => {
  it('SIGINT from terminal_signal interrupts `sleep 60` and the send settles at the prompt', async () => {
    stack = await startStack()
    const { sessionId, pid } = await stack.open()
    const send = stack.send(sessionId, 'sleep 60')
    // Signal only once sleep runs: a SIGINT that lands between bash's fork and exec is swallowed by bash's handler.
    await eventually(() => commandLine(foregroundGroup(pid as number) ?? 0)?.[0]?.endsWith('sleep') === true, 'sleep to take the foreground')
    const signalled = await stack.terminals.signal(stack.agent, sessionId, 'SIGINT')
    expect(signalled.delivered).toBe(true)
    expect(signalled.targetPgid).not.toBe(pid)
    expect(await send.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 130 })
  })

  it('SIGINT right after a command was typed still interrupts it (not lost between fork and exec)', async () => {
    // A short timeout: a lost signal shows up as `timeout` instead of holding the test.
    stack = await startStack({ ...PATIENT, timeoutMs: 5_000 })
    const { sessionId } = await stack.open()
    for (let round = 0; round < 12; round++) {
      const send = stack.send(sessionId, 'sleep 60')
      // Once bash echoed the line it has read it, and forks next. (A SIGINT while readline still
      // reads the line is a Ctrl-C typed into the line: it edits the line, as in any terminal.)
      // Checked every event-loop turn, right after the output callbacks: a poll with a delay would
      // look only after sleep had long exec'd.
      let seen = ''
      while (!(seen += send.readOutput().delta).includes('sleep 60\n')) await new Promise((resolve) => setImmediate(resolve))
      // No waiting for sleep to take the foreground: the signal lands between fork and exec, or after.
      await new Promise((resolve) => setTimeout(resolve, round % 4))
      await stack.terminals.signal(stack.agent, sessionId, 'SIGINT')
      expect({ round, result: await send.done }).toMatchObject({ round, result: { waitReason: 'stdin_read', exitCode: 130 } })
      await send.released
    }
  })

  it('cancelling a send (caller abort) delivers a real SIGINT and returns at the next prompt', async () => {
    stack = await startStack()
    const { sessionId, pid } = await stack.open()
    const caller = new AbortController()
    const send = stack.send(sessionId, 'sleep 60', { signal: caller.signal })
    await eventually(() => foregroundGroup(pid as number) !== pid, 'sleep to take the foreground')
    caller.abort()
    expect(await send.done).toMatchObject({ waitReason: 'stdin_read', exitCode: 130 })
    await send.released
    expect((await stack.run(sessionId, 'echo still-here')).viewport).toContain('still-here')
  })

  it('a raw-mode program (ISIG off) waiting for input settles as stdin_read and a real SIGINT interrupts it', async () => {
    stack = await startStack()
    const { sessionId } = await stack.open()
    // The marker is computed, so the echoed command line cannot satisfy an output check.
    const script = "import sys, tty; tty.setraw(0); print('raw' + '-ready', flush=True); sys.stdin.read(1)"
    const waiting = await stack.run(sessionId, `python3 -c "${script}"`)
    expect(waiting).toMatchObject({ waitReason: 'stdin_read', viewport: expect.stringContaining('raw-ready') })
    await stack.terminals.signal(stack.agent, sessionId, 'SIGINT')
    const after = await stack.run(sessionId, '', { submit: false })
    expect(after).toMatchObject({ waitReason: 'stdin_read', exitCode: 130, viewport: expect.stringContaining('KeyboardInterrupt') })
  })

  it('cancelling a busy raw-mode program (ISIG off) interrupts it with a real SIGINT', async () => {
    stack = await startStack()
    const { sessionId } = await stack.open()
    const script = "import time, tty; tty.setraw(0); print('raw' + '-busy', flush=True); time.sleep(60)"
    const send = stack.send(sessionId, `python3 -c "${script}"`)
    let seen = ''
    await eventually(() => (seen += send.readOutput().delta).includes('raw-busy'), 'the raw-mode program')
    expect(send.cancel()).toBe(true)
    const result = await send.done
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 130 })
    expect(seen + result.viewport).toContain('KeyboardInterrupt')
  })

  it('refuses SIGKILL aimed at the shell itself', async () => {
    stack = await startStack()
    const { sessionId } = await stack.open()
    await expect(stack.terminals.signal(stack.agent, sessionId, 'SIGKILL')).rejects.toMatchObject({ code: 'REFUSED_SHELL_KILL' })
  })
})

describe('teardown', () => {
  it('close removes TERM-ignoring and disowned descendants', async () => {
    stack = await startStack({ ...PATIENT, disposeGraceMs: 500 })
    const { sessionId, pid } = await stack.open()
    await stack.run(sessionId, `bash -c 'trap "" TERM; while :; do sleep 1; done' & echo "ignorer=$!"`)
    await stack.run(sessionId, 'sleep 1000 & disown; echo "disowned=$!"')
    const text = stack.terminals.read(stack.agent, sessionId, { count: 20 }).text
    const { ignorer, disowned } = labelledNumbers(text)
    expect(ignorer && isAlive(ignorer) && disowned && isAlive(disowned)).toBeTruthy()
    expect(await stack.terminals.close(stack.agent, sessionId)).toBe(true)
    expect([isAlive(pid as number), isAlive(ignorer as number), isAlive(disowned as number)]).toEqual([false, false, false])
  })

  it('a shell that exits settles the send as session_exit and later sends too', async () => {
    stack = await startStack()
    const { sessionId } = await stack.open()
    const result = await stack.run(sessionId, 'exit 3')
    expect(result).toMatchObject({ waitReason: 'session_exit', sessionStatus: { kind: 'exited', exitCode: 3, signal: null } })
    expect(await stack.run(sessionId, 'echo nothing')).toMatchObject({ waitReason: 'session_exit', viewport: '' })
  })
})

describe('exit status after the shell was killed from outside', () => {
  /** A session whose last command was `false` (exit 1 reported), and its bash process. */
  async function afterFalse() {
    stack = await startStack()
    const { sessionId, pid } = await stack.open()
    // Unconfined, bash is the top-level process.
    expect(processName(pid as number)).toBe('bash')
    expect(await stack.run(sessionId, 'false')).toMatchObject({ waitReason: 'stdin_read', exitCode: 1 })
    return { sessionId, bash: pid as number }
  }

  it('a send after kill -9 of bash reports session_exit and no exit status (not the earlier `false`)', async () => {
    const { sessionId, bash } = await afterFalse()
    process.kill(bash, 'SIGKILL')
    await eventually(() => stack!.terminals.list(stack!.agent)[0]?.status.kind === 'exited', 'the session to see the exit')
    const result = await stack!.run(sessionId, 'rm -rf important')
    expect(result).toMatchObject({ viewport: '', waitReason: 'session_exit', sessionStatus: { kind: 'exited' } })
    expect('exitCode' in result).toBe(false)
  })

  it('a send right after the kill, before the exit was observed, reports no exit status either', async () => {
    const { sessionId, bash } = await afterFalse()
    process.kill(bash, 'SIGKILL')
    // Whether the send sees the exit before its write or after, bash never reads this line.
    const result = await stack!.run(sessionId, 'echo never-ran')
    expect(result).toMatchObject({ waitReason: 'session_exit', sessionStatus: { kind: 'exited' } })
    expect(result.viewport).not.toContain('never-ran\n')
    expect('exitCode' in result).toBe(false)
  })
})

describe('startup', () => {
  it('rejects when the shell exits during startup', async () => {
    stack = await startStack({ ...PATIENT, shellPath: 'sh', shellArgs: ['-c', 'exit 3'] })
    await expect(stack.open()).rejects.toMatchObject({ code: 'STARTUP_EXITED', message: 'PTY shell exited during startup' })
  })

  it('quotes what the shell printed before it exited, so the reason reaches the caller', async () => {
    const argv = ['-c', 'echo "dsh-sandbox: mount check failed: /w/.git" >&2; exit 125']
    stack = await startStack({ ...PATIENT, shellPath: 'sh', shellArgs: argv })
    const refusal = await stack.open().then(
      () => undefined,
      (error: { code?: string; message: string }) => ({ code: error.code, message: error.message }),
    )
    expect(refusal).toEqual({ code: 'STARTUP_EXITED', message: 'PTY shell exited during startup: dsh-sandbox: mount check failed: /w/.git' })
  })

  it('rejects on the startup timeout and leaves nothing running', async () => {
    const argv = ['sleep', '31.25']
    stack = await startStack({ ...PATIENT, shellPath: argv[0], shellArgs: argv.slice(1), timeoutMs: 200 })
    await expect(stack.open()).rejects.toMatchObject({ code: 'STARTUP_TIMEOUT' })
    expect(processesRunning(argv)).toEqual([])
  })

  it('a caller abort during startup rejects with its exact reason and leaves nothing running', async () => {
    const argv = ['sleep', '32.25']
    stack = await startStack({ ...PATIENT, shellPath: argv[0], shellArgs: argv.slice(1) })
    const caller = new AbortController()
    const pending = stack.open({}, caller.signal)
    await eventually(() => processesRunning(argv).length > 0, 'the shell to start')
    const reason = new Error('caller cancelled')
    caller.abort(reason)
    await expect(pending).rejects.toBe(reason)
    expect(processesRunning(argv)).toEqual([])
  })
})

describe('many sessions', () => {
  it('20 concurrent sessions each settle their echo exactly with its output; a 21st concurrent open is refused', async () => {
    stack = await startStack(PATIENT, { terminals: { maxSessionsPerAgent: 20 } })
    const attempts = await Promise.allSettled(Array.from({ length: 21 }, () => stack!.open()))
    const refused = attempts.flatMap((attempt) => (attempt.status === 'rejected' ? [(attempt.reason as { code?: string }).code] : []))
    expect(refused).toEqual(['SESSION_LIMIT'])
    const opened = attempts.flatMap((attempt) => (attempt.status === 'fulfilled' ? [attempt.value] : []))
    const results = await Promise.all(opened.map((session, index) => stack!.run(session.sessionId, `echo token-${index}`)))
    expect(results.map((result) => result.waitReason)).toEqual(results.map(() => 'stdin_read'))
    expect(results.map((result) => result.viewport)).toEqual(results.map((_, index) => `echo token-${index}\ntoken-${index}\ndsh> `))
    await Promise.all(opened.map((session) => stack!.terminals.close(stack!.agent, session.sessionId)))
    expect(opened.filter((session) => isAlive(session.pid as number))).toEqual([])
  })
})
