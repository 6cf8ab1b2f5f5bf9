import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from 'dsh-agent'
import { asTerminalSessionId } from 'dsh-terminal'
import type { ToolResult } from 'dsh-tools'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { children, eventually, foregroundGroup, isAlive, processName } from 'dsh-testkit'
import { type RealTools, text } from './real-stack'

// The whole lifecycle on a real bash through ctx.tools.execute, as a suite each composition runs
// (real-bash.test.ts: the default, in process; real-bash-durable.test.ts: through a session host). The prompt is the backend's
// controlled `dsh> `; a send's viewport is the echoed command line, its output and the next prompt.

const PROMPT = 'dsh> '
const READY = (exit: number) => `[wait: stdin_read]\n[input: prompt]\n[exit: ${exit}]\n[session: running]`

/** A composition the suite runs on: how to mount it, and what to wait for after it was disposed. */
export interface SuiteComposition {
  readonly label: string
  mount(): Promise<RealTools>
  /** Runs after the stack was disposed, before the no-process-left check (e.g. a session host's idle exit). */
  after?(): Promise<void>
}

/** Register the whole real-bash tool suite on `composition`. */
export function describeRealBash(composition: SuiteComposition): void {
  let stack: RealTools
  let root: Context
  let agent: Agent

  function call(name: string, args: unknown = {}, signal?: AbortSignal): Promise<ToolResult> {
    return stack.call(agent, name, args, signal)
  }

  beforeAll(async () => {
    stack = await composition.mount()
    root = stack.root
    agent = await root.agents.create()
  })

  afterAll(async () => {
    await agent?.dispose()
    await stack.dispose()
    await composition.after?.()
    // Nothing the test started outlives it (children of this test process, zombies excluded).
    expect(children(process.pid).filter(isAlive)).toEqual([])
  })

  describe(`dsh-tool-terminal on a real bash (${composition.label})`, () => {
    let pid = 0
    let size = ''

    it('opens a session and keeps cd and export between sends', async () => {
      const opened = await call('terminal_open', { type: 'shell', name: 'main', cwd: '/tmp' })
      expect(text(opened)).toBe(`started terminal session pty-1 (main) [type: shell]\n${PROMPT}`)
      pid = opened.meta?.pid as number
      const { rows, cols } = (opened.meta?.size ?? {}) as { rows?: number; cols?: number }
      size = `${cols}x${rows}`
      expect(isAlive(pid)).toBe(true)

      const setState = await call('terminal_send', { sessionId: 'pty-1', text: 'cd /usr && export DSH_TOOL_PROBE=kept' })
      expect(text(setState)).toBe(`cd /usr && export DSH_TOOL_PROBE=kept\n${PROMPT}\n${READY(0)}`)
      const probe = await call('terminal_send', { sessionId: 'pty-1', text: 'pwd; echo "$DSH_TOOL_PROBE"' })
      expect(text(probe)).toBe(`pwd; echo "$DSH_TOOL_PROBE"\n/usr\nkept\n${PROMPT}\n${READY(0)}`)
      expect(probe.presentation.card).toEqual({ type: 'terminal', sessionId: 'pty-1' })
    })

    it('reports the exit status of the last command and sends partial lines with submit false', async () => {
      const failed = await call('terminal_send', { sessionId: 'pty-1', text: 'false' })
      expect(text(failed)).toBe(`false\n${PROMPT}\n${READY(1)}`)
      expect(failed.meta).toMatchObject({ waitReason: 'stdin_read', exitCode: 1, sessionStatus: { kind: 'running' } })

      const partial = await call('terminal_send', { sessionId: 'pty-1', text: 'echo sp', submit: false })
      expect(partial.meta?.waitReason).not.toBe('session_exit')
      const rest = await call('terminal_send', { sessionId: 'pty-1', text: 'lit' })
      expect(text(rest)).toContain('\nsplit\n')
    })

    it('reads scrollback pages with line numbers', async () => {
      await call('terminal_send', { sessionId: 'pty-1', text: 'printf "r1\\nr2\\n"' })
      const page = await call('terminal_read', { sessionId: 'pty-1', count: 3 })
      const total = page.meta?.totalLines as number
      expect(text(page)).toBe(`r1\nr2\n${PROMPT}\n[lines: ${total - 2}-${total} of ${total}]\n[input: prompt]`)
      expect(page.meta?.input).toEqual({ kind: 'prompt' })
      const older = await call('terminal_read', { sessionId: 'pty-1', offset: 3, count: 1 })
      expect(text(older)).toBe(`${PROMPT}printf "r1\\nr2\\n"\n[lines: ${total - 3}-${total - 3} of ${total}]\n[input: prompt]`)
    })

    it('a background send is interrupted by terminal_signal and reports exit 130', async () => {
      const started = await call('terminal_send', { sessionId: 'pty-1', text: 'sleep 30', run_in_background: true })
      expect(text(started)).toBe('started background job pty-send-1')
      const busy = await call('terminal_send', { sessionId: 'pty-1', text: 'echo no' })
      expect(text(busy)).toBe(
        'Error: PTY session pty-1 is busy: background job pty-send-1 holds it until its send ends (it may be running or being interrupted). Follow it with job_output or stop it with job_kill, then send again.',
      )
      await waitForForeground(pid)
      const signalled = await call('terminal_signal', { sessionId: 'pty-1', signal: 'SIGINT' })
      expect(text(signalled)).toMatch(/^delivered SIGINT to foreground process group \d+$/)
      expect(signalled.meta?.targetPgid).not.toBe(pid)
      const output = text(await call('job_output', { jobId: 'pty-send-1', wait: true }))
      expect(output).toBe(`sleep 30\n\n${PROMPT}\n[status: completed, wait: stdin_read, input: prompt, exit: 130, session: running]`)
    })

    it('job_kill interrupts a background send with SIGINT and the job ends killed', async () => {
      await call('terminal_send', { sessionId: 'pty-1', text: 'sleep 31', run_in_background: true })
      await waitForForeground(pid)
      expect(text(await call('job_kill', { jobId: 'pty-send-2' }))).toBe('requested cancellation of job pty-send-2')
      const output = text(await call('job_output', { jobId: 'pty-send-2', wait: true }))
      expect(output).toBe(`sleep 31\n\n${PROMPT}\n[status: killed, interrupted with SIGINT; wait: stdin_read, input: prompt, exit: 130, session: running]`)
      const after = await call('terminal_send', { sessionId: 'pty-1', text: 'echo alive' })
      expect(text(after)).toBe(`echo alive\nalive\n${PROMPT}\n${READY(0)}`)
    })

    it('a background server keeps its job running until job_kill stops it; the session is usable again', async () => {
      const started = await call('terminal_send', { sessionId: 'pty-1', text: 'python3 -m http.server 0 --bind 127.0.0.1', run_in_background: true })
      expect(text(started)).toBe('started background job pty-send-3')
      // job_output waits for the server's ready line instead of polling; the job keeps running.
      const serving = await call('job_output', { jobId: 'pty-send-3', waitFor: '^Serving HTTP on 127\\.0\\.0\\.1 port \\d+' })
      expect(serving.meta).toMatchObject({ waited: 'match', status: 'running' })
      expect(text(serving)).toMatch(/\n\[waited: match\]\n\[match: Serving HTTP on 127\.0\.0\.1 port \d+ [^\n]*\]\n\[status: running, /)
      expect(text(await call('job_kill', { jobId: 'pty-send-3' }))).toBe('requested cancellation of job pty-send-3')
      const output = text(await call('job_output', { jobId: 'pty-send-3', wait: true }))
      expect(output).toContain('Keyboard interrupt received, exiting.')
      expect(output).toMatch(/\n\[status: killed, interrupted with SIGINT; wait: stdin_read, input: prompt, exit: \d+, session: running\]$/)
      const after = await call('terminal_send', { sessionId: 'pty-1', text: 'echo alive' })
      expect(text(after)).toBe(`echo alive\nalive\n${PROMPT}\n${READY(0)}`)
    })

    it('output printed after an inferred_idle result starts the next result, marked as earlier output', async () => {
      // idleMs: silence ends the wait only when asked, since sleep is proven not to read the terminal.
      const first = text(await call('terminal_send', { sessionId: 'pty-1', text: 'sleep 6; echo LATE-OUTPUT', idleMs: 1000 }))
      // The send gave up on silence while sleep still ran: the input line says so, and that sleep does not read.
      expect(first).toMatch(
        /^sleep 6; echo LATE-OUTPUT\n\n\[wait: inferred_idle\]\n\[input: none; busy: sleep, pid \d+, running [^,\]]+, not reading the terminal\]\n\[session: running\]$/,
      )
      await eventually(async () => text(await call('terminal_read', { sessionId: 'pty-1', offset: 1, count: 1 })).startsWith('LATE-OUTPUT\n'), 'LATE-OUTPUT')
      const next = text(await call('terminal_send', { sessionId: 'pty-1', text: '', submit: false }))
      expect(next).toBe(`[earlier output, printed after the previous result]\nLATE-OUTPUT\n${PROMPT}\n(no new output)\n${READY(0)}`)
      expect(text(await call('terminal_send', { sessionId: 'pty-1', text: '', submit: false }))).toBe(
        '(no new output)\n[wait: stdin_read]\n[input: prompt]\n[session: running]',
      )
      // The session's silence rule is 5 s here: the command outlives its send by design.
    }, 20_000)

    it('a cancelled foreground send interrupts the command and returns promptly as an error', async () => {
      const controller = new AbortController()
      const pending = call('terminal_send', { sessionId: 'pty-1', text: 'sleep 32' }, controller.signal)
      await waitForForeground(pid)
      controller.abort()
      const cancelled = await pending
      expect(cancelled.error?.code).toBe('CANCELLED')
      // 130: SIGINT ended the sleep (a send that waited for it to finish would find 0).
      const after = await call('terminal_send', { sessionId: 'pty-1', text: 'echo $?' })
      expect(text(after)).toBe(`echo $?\n130\n${PROMPT}\n${READY(0)}`)
    })

    it('says what the terminal waits for: an unfinished command, then a secret', async () => {
      const open = await call('terminal_send', { sessionId: 'pty-1', text: 'echo "unterminated' })
      expect(text(open)).toBe(
        'echo "unterminated\n> \n[wait: stdin_read]\n[input: continuation: the shell needs the rest of the command; send it, or "\\u0003" (Ctrl-C) to abandon it]\n[session: running]',
      )
      expect(open.meta?.input).toEqual({ kind: 'continuation' })
      const abandoned = await call('terminal_send', { sessionId: 'pty-1', text: '\u0003', submit: false })
      expect(abandoned.meta?.input).toEqual({ kind: 'prompt' })

      const asked = await call('terminal_send', { sessionId: 'pty-1', text: "read -rs -p 'Secret: ' secret" })
      expect(text(asked)).toMatch(
        /\nSecret: \n\[wait: stdin_read\]\n\[input: password \(bash, pid \d+\): a secret is asked for; get it from the user, never invent one\]\n\[secret: pty-1 waits for a password or other secret\. Ask the user: they can type it themselves with dsh-terminal attach pty-1 .*\]\n\[session: running\]$/,
      )
      const answered = await call('terminal_send', { sessionId: 'pty-1', text: 'hunter2' })
      expect(answered.meta).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'prompt' } })
      expect(text(answered)).not.toContain('hunter2')
    })

    it('waitFor returns as soon as a line matches, while the command still runs', async () => {
      const matched = await call('terminal_send', { sessionId: 'pty-1', text: 'echo step-1; echo step-2; sleep 33', waitFor: '^step-2$' })
      expect(text(matched)).toMatch(/^echo step-1; echo step-2; sleep 33\nstep-1\nstep-2\n(.*\n)?\[wait: output_match\]\n\[match: step-2\]\n/)
      expect(matched.meta).toMatchObject({ waitReason: 'output_match', match: { text: 'step-2', line: 'step-2' } })
      await waitForForeground(pid)
      await call('terminal_signal', { sessionId: 'pty-1', signal: 'SIGINT' })
      const collected = await call('terminal_send', { sessionId: 'pty-1', text: '', submit: false })
      expect(collected.meta?.waitReason).toBe('stdin_read')
      expect(text(await call('terminal_send', { sessionId: 'pty-1', text: 'echo alive' }))).toBe(`echo alive\nalive\n${PROMPT}\n${READY(0)}`)
    })

    it("a background send with waitFor ends its job on a server's ready line; the server keeps the session", async () => {
      const started = await call('terminal_send', {
        sessionId: 'pty-1',
        text: 'python3 -m http.server 0 --bind 127.0.0.1',
        waitFor: '^Serving HTTP on 127\\.0\\.0\\.1 port \\d+',
        run_in_background: true,
      })
      const jobId = started.meta?.jobId as string
      const output = text(await call('job_output', { jobId, wait: true }))
      expect(output).toMatch(/\nServing HTTP on 127\.0\.0\.1 port \d+ .*\n\[status: completed, wait: output_match, /)
      // The job ended; the server did not: it is what runs in front now.
      await eventually(() => {
        const group = foregroundGroup(pid)
        return group !== undefined && group !== pid && processName(group)?.startsWith('python3')
      }, 'the server to hold the foreground')
      await call('terminal_signal', { sessionId: 'pty-1', signal: 'SIGINT' })
      const collected = await call('terminal_send', { sessionId: 'pty-1', text: '', submit: false })
      expect(collected.meta?.waitReason).toBe('stdin_read')
      expect(text(await call('terminal_send', { sessionId: 'pty-1', text: 'echo alive' }))).toBe(`echo alive\nalive\n${PROMPT}\n${READY(0)}`)
    })

    it('a long result keeps head and tail; the terminal_read call it names returns exactly the lines in between', async () => {
      const result = await call('terminal_send', { sessionId: 'pty-1', text: 'seq 1 5000', maxBytes: 2048 })
      const shaped = text(result)
      expect(Buffer.byteLength(shaped)).toBeLessThanOrEqual(2048)
      const lines = shaped.split('\n')
      expect(lines.slice(0, 3)).toEqual(['seq 1 5000', '1', '2'])
      const body = lines.slice(0, lines.indexOf('[wait: stdin_read]'))
      expect(body.slice(-2)).toEqual(['5000', PROMPT])
      const elision = body.findIndex((line) => line.startsWith('[… '))
      const named = /^\[… (\d+) lines \([^)]+\) left out; terminal_read (\{.*\}) returns them\]$/.exec(body[elision]!)
      expect(named).not.toBeNull()
      const args = JSON.parse(named![2]!) as { fromLine: number; count: number }
      expect(body.length - 1 + args.count).toBe(5002)
      const middle = text(await call('terminal_read', args))
      // seq's line k sits `elision` lines into the viewport's numbering: the echo line is line 0.
      const expected = Array.from({ length: args.count }, (_, index) => String(elision + index))
      expect(middle.split('\n').slice(0, args.count)).toEqual(expected)
      expect(middle).toContain(`[lines: ${args.fromLine}-${args.fromLine + args.count - 1} of `)
    })

    it('a result longer than the scrollback names the read call only for the lines still kept', async () => {
      // 30 000 lines against a scrollback of 10 000: most of the left-out middle is gone already.
      const result = await call('terminal_send', { sessionId: 'pty-1', text: 'seq 1 30000', maxBytes: 2048 })
      const body = text(result).split('\n')
      const elision = body.find((line) => line.startsWith('[… '))
      const named = /^\[… (\d+) lines \([^)]+\) left out; the first (\d+) are no longer kept; terminal_read (\{.*\}) returns the last (\d+)\]$/.exec(elision!)
      expect(named, elision).not.toBeNull()
      const [, leftOut, gone, call_, kept] = named!
      const args = JSON.parse(call_!) as { fromLine: number; count: number }
      expect(args.count).toBe(Number(kept))
      expect(Number(gone) + Number(kept)).toBe(Number(leftOut))
      const page = text(await call('terminal_read', args))
      // The call returns exactly what it promises: the oldest kept line and those after it, nothing lost.
      expect(page).toContain(`[lines: ${args.fromLine}-${args.fromLine + args.count - 1} of `)
      expect(page).toContain(`lines before ${args.fromLine} are no longer kept`)
      const numbers = page.split('\n').slice(0, args.count).map(Number)
      expect(numbers.every((value, index) => index === 0 || value === numbers[index - 1]! + 1)).toBe(true)
      // …up to the line right before the result's tail.
      expect(numbers.at(-1)! + 1).toBe(Number(body[body.indexOf(elision!) + 1]))
    })

    it('lists, closes and forgets the session, leaving no process behind', async () => {
      expect(text(await call('terminal_list'))).toBe(`pty-1 (main) [shell] running pid=${pid} size=${size} [input: prompt]`)
      expect(text(await call('terminal_close', { sessionId: 'pty-1' }))).toBe('closed terminal session pty-1')
      expect(isAlive(pid)).toBe(false)
      expect(text(await call('terminal_list'))).toBe('(no terminal sessions)')
      expect(text(await call('terminal_send', { sessionId: 'pty-1', text: 'ls' }))).toBe('Error: unknown PTY session pty-1')
    })

    it('an exiting shell reports session_exit and its status', async () => {
      await call('terminal_open', { type: 'shell' })
      const exited = await call('terminal_send', { sessionId: 'pty-2', text: 'exit 3' })
      expect(text(exited).endsWith('\n[wait: session_exit]\n[session: exited code=3 signal=null]')).toBe(true)
      expect(exited.meta).toMatchObject({ waitReason: 'session_exit', sessionStatus: { kind: 'exited', exitCode: 3, signal: null } })
      expect(text(await call('terminal_list'))).toMatch(/^pty-2 \[shell\] exited code=3 signal=null pid=\d+ size=\d+x\d+$/)
      expect(text(await call('terminal_close', { sessionId: 'pty-2' }))).toBe('closed terminal session pty-2')
    })

    it('drives vim through its screen: keys, view "screen", a resize, then :wq back to the prompt', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'dsh-tool-vim-'))
      try {
        const opened = await call('terminal_open', { type: 'shell', rows: 10, cols: 50, cwd: dir })
        expect(opened.meta?.size).toEqual({ rows: 10, cols: 50 })
        const keysLine = /^\[input: keys \(vim, pid \d+, alternate screen\)\]$/m
        // No vimrc: the screen is vim's own defaults (tildes, the file message, -- INSERT --).
        const started = text(await call('terminal_send', { sessionId: 'pty-3', text: 'vim -u NONE -N notes.txt' }))
        expect(started.split('\n').slice(0, 3)).toEqual(['[screen: 50 cols x 10 rows, cursor at row 1, col 1, alternate]', '', '~'])
        expect(started).toContain('\n"notes.txt" [New]\n[wait: stdin_read]\n')
        expect(started).toMatch(keysLine)

        const typed = await call('terminal_send', { sessionId: 'pty-3', keys: ['i', 'h', 'e', 'l', 'l', 'o'] })
        const insertScreen = ['[screen: 50 cols x 10 rows, cursor at row 1, col 6, alternate]', 'hello', ...Array(8).fill('~'), '-- INSERT --']
        expect(text(typed).split('\n').slice(0, 11)).toEqual(insertScreen)
        expect(typed.meta?.screen).toEqual({ size: { rows: 10, cols: 50 }, cursor: { row: 1, col: 6 }, alternateScreen: true })

        const read = text(await call('terminal_read', { sessionId: 'pty-3', view: 'screen' }))
        expect(read.split('\n').slice(0, 11)).toEqual(insertScreen)
        expect(read.split('\n')[11]).toMatch(keysLine)

        const resized = text(await call('terminal_send', { sessionId: 'pty-3', rows: 8, cols: 40 }))
        expect(resized.split('\n').slice(0, 9)).toEqual([
          '[screen: 40 cols x 8 rows, cursor at row 1, col 6, alternate]',
          'hello',
          ...Array(6).fill('~'),
          '-- INSERT --',
        ])

        const saved = await call('terminal_send', { sessionId: 'pty-3', keys: ['Escape', ':', 'w', 'q', 'Enter'] })
        expect(text(saved)).toBe(`${PROMPT}\n${READY(0)}`)
        expect(saved.meta?.screen).toBeUndefined()
        expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('hello\n')
        expect(text(await call('terminal_read', { sessionId: 'pty-3', view: 'screen' }))).toMatch(
          /^\[screen: 40 cols x 8 rows, cursor at row \d+, col 6\]\n(?:.*\n)*dsh>\n\[input: prompt\]$/,
        )
        expect(text(await call('terminal_close', { sessionId: 'pty-3' }))).toBe('closed terminal session pty-3')
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })

    it('a secret typed by hand: the result names the attach command, the person types it, the model never sees it', async () => {
      const opened = await call('terminal_open', { type: 'shell' })
      const id = opened.meta?.sessionId as string
      let watched = ''
      const decoder = new TextDecoder()
      const view = await root.terminals.observeAsHuman(agent, asTerminalSessionId(id), {
        onOutput: (bytes) => {
          watched += decoder.decode(bytes, { stream: true })
        },
        onEnd: () => {},
      })
      try {
        const asked = text(await call('terminal_send', { sessionId: id, text: `read -rs -p 'Secret: ' secret; echo "got \${#secret} chars"` }))
        expect(asked).toContain(
          `\n[secret: ${id} waits for a password or other secret. Ask the user: they can type it themselves with dsh-terminal attach ${id} `,
        )
        expect(asked.endsWith('\n[session: running]\n[human: watching]')).toBe(true)

        view.takeWrite()
        await view.write('hunter2\r')
        const refused = await call('terminal_send', { sessionId: id, text: 'echo too-early' })
        expect(refused.error?.code).toBe('HUMAN_ACTIVE')
        await eventually(() => watched.includes('got 7 chars'), 'the shell to read the secret the person typed')
      } finally {
        view.close()
      }
      // The person left: sends go through again, and the secret is in no result.
      const after = text(await call('terminal_send', { sessionId: id, text: 'echo after' }))
      expect(after).toContain('got 7 chars')
      expect(after).not.toContain('[human:')
      expect(after).not.toContain('hunter2')
      expect(text(await call('terminal_read', { sessionId: id }))).not.toContain('hunter2')
      await call('terminal_close', { sessionId: id })
    })
  })

  /**
   * Wait until `sleep` owns the shell's terminal, polling /proc. Waiting for the exec, not just the
   * fork, keeps these tests about the tools: the provider's own fork-to-exec wait is tested below it.
   */
  async function waitForForeground(shellPid: number): Promise<void> {
    await eventually(
      () => {
        const group = foregroundGroup(shellPid)
        return group !== undefined && group > 0 && group !== shellPid && processName(group) === 'sleep'
      },
      `shell ${shellPid} to start sleep in the foreground`,
      5000,
    )
  }
}
