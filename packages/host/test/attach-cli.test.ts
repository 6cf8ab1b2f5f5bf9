import { spawn } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { eventually } from 'dsh-testkit'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { attachCommand, RawClient, startTestHost, type TestHost, TmuxPane } from './attach-harness'
import { type Running, start } from './process'

/** Starting tsx in a loaded machine takes seconds: give the client's first output this long. */
const STARTUP_MS = 30_000

let host: TestHost
const panes: TmuxPane[] = []
const children: Running[] = []
const clients: RawClient[] = []

beforeEach(async () => {
  host = await startTestHost()
  expect((await host.call('terminal_open', { type: 'shell' })).code).toBeUndefined()
})

afterEach(async () => {
  for (const pane of panes.splice(0)) pane.kill()
  for (const client of clients.splice(0)) client.destroy()
  for (const child of children.splice(0)) {
    child.child.kill('SIGKILL')
    await child.finished
  }
  await host.close()
})

/** `dsh-terminal attach …` in a real terminal (tmux). */
function attachInTmux(args: readonly string[]): TmuxPane {
  const pane = TmuxPane.start(attachCommand(args, host.runtime), { FORCE_COLOR: '0' })
  panes.push(pane)
  return pane
}

/** `dsh-terminal attach …` on pipes. */
function attachOnPipes(args: readonly string[]): Running {
  const [command, ...rest] = attachCommand(args, host.runtime)
  const running = start(command!, rest)
  children.push(running)
  return running
}

/** The agent's send, retried while the person's last keystroke still holds it off (HUMAN_ACTIVE). */
async function agentSend(text: string): Promise<string> {
  return await eventually(
    async () => {
      const sent = await host.call('terminal_send', { sessionId: 'pty-1', text })
      if (sent.code === 'HUMAN_ACTIVE') return false
      expect(sent.code).toBeUndefined()
      return sent.text
    },
    `the agent's send of ${text}`,
    STARTUP_MS,
  )
}

describe('dsh-terminal attach', () => {
  it('lists the sessions of the running hosts with their input state, and says so when none runs', async () => {
    const listed = attachOnPipes([])
    listed.child.stdin.end()
    const done = await listed.finished
    expect(done.stderr).toBe('')
    expect(done.code).toBe(0)
    const lines = done.stdout.split('\n')
    expect(lines[0]).toMatch(/^HOST PID\s+SESSION\s+NAME\s+OWNER\s+INPUT\s+HUMAN\s+STATUS$/)
    expect(lines[1]).toMatch(new RegExp(`^${process.pid}\\s+pty-1\\s+-\\s+${host.agent.id}\\s+prompt\\s+-\\s+running$`))
    expect(done.stdout).toContain(`host ${process.pid}: 1 session(s), cwd ${process.cwd()}`)

    await host.server.close()
    const empty = attachOnPipes([])
    empty.child.stdin.end()
    expect(await empty.finished).toMatchObject({ code: 0, stdout: expect.stringContaining('No running dsh-terminal host') })
  })

  it('shows the screen, forwards keystrokes the agent then reads, and Ctrl-] detaches while the session keeps running', async () => {
    await host.call('terminal_send', { sessionId: 'pty-1', text: 'echo agent-said-$((40+2))' })
    const pane = attachInTmux(['pty-1'])
    await pane.waitFor('agent-said-42', STARTUP_MS)
    pane.keys('echo person-typed-$((6*7))', true)
    pane.keys('Enter')
    await pane.waitFor('person-typed-42')
    expect((await host.call('terminal_list')).text).toMatch(/typing|watching/)
    const read = await host.call('terminal_read', { sessionId: 'pty-1' })
    expect(read.text).toContain('person-typed-42')

    pane.keys('C-]')
    const after = await pane.waitFor('[exit 0]')
    expect(after).toContain('[attached to pty-1: you are typing into it; Ctrl-] detaches, it keeps running]')
    expect(after).toContain('[detached from pty-1; it keeps running]')
    expect(after).toMatch(/\[pty-1 is \d+x\d+, your terminal 120x40: long lines wrap/) // the session is 160 columns wide
    expect(after).not.toContain('person-typed-42') // the alternate screen is gone: the user's own screen is back
    expect(await agentSend('echo still-$((1+1))')).toContain('still-2')
  })

  it('--read-only watches and ignores keystrokes', async () => {
    const pane = attachInTmux(['pty-1', '--read-only'])
    await pane.waitFor('dsh>', STARTUP_MS)
    pane.keys('echo sneaky-$((2*3))', true)
    pane.keys('Enter')
    await host.call('terminal_send', { sessionId: 'pty-1', text: 'echo agent-$((3*3))' })
    await pane.waitFor('agent-9')
    pane.keys('C-]') // processed after the keys above: the client reads its input in order
    const after = await pane.waitFor('[exit 0]')
    expect(after).toContain('read-only (--read-only): keystrokes are ignored')
    expect((await host.call('terminal_read', { sessionId: 'pty-1' })).text).not.toContain('sneaky')
  })

  it('watches read-only when someone else holds the writer role, and ends with the session', async () => {
    const writer = await RawClient.connect(host.server.files.socketPath)
    clients.push(writer)
    writer.send({ type: 'hello', token: readFileSync(host.server.files.tokenPath, 'utf8').trim() })
    writer.send({ type: 'attach', sessionId: 'pty-1' })
    expect(await writer.nextOfType('screen')).toMatchObject({ writer: true })

    const second = attachOnPipes(['pty-1'])
    await eventually(() => second.stderr().includes('[attached to pty-1'), 'the second attach', STARTUP_MS)
    expect(second.stderr()).toContain('another person holds the keyboard (an attach or the web view), so your keystrokes are ignored')
    second.child.stdin.write('echo second-writer\n')
    await host.call('terminal_close', { sessionId: 'pty-1' })
    const done = await second.finished
    expect(done.code).toBe(0)
    expect(done.stderr).toMatch(/\[pty-1 ended: .+\]\n$/)
    expect(writer.output()).not.toContain('second-writer')
  })

  it('answers `read -s` for the agent: the secret reaches the program and never an agent result', async () => {
    const secret = 'hunter2-xyzzy'
    const results: string[] = []
    const record = (outcome: Awaited<ReturnType<TestHost['call']>>) => {
      results.push(outcome.text, JSON.stringify(outcome.result.meta ?? {}))
      return outcome
    }
    const asked = record(await host.call('terminal_send', { sessionId: 'pty-1', text: `read -s -p 'Password: ' SECRET; echo "got \${#SECRET} chars"` }))
    expect(asked.result.meta?.input).toMatchObject({ kind: 'password' })

    const pane = attachInTmux(['pty-1'])
    await pane.waitFor('Password:', STARTUP_MS)
    pane.keys(secret, true)
    pane.keys('Enter')
    await pane.waitFor(`got ${secret.length} chars`)
    pane.keys('C-]')
    await pane.waitFor('[exit 0]')

    const read = record(await host.call('terminal_read', { sessionId: 'pty-1' }))
    expect(read.text).toContain(`got ${secret.length} chars`)
    record(await host.call('terminal_list'))
    record({ text: await agentSend('echo done'), result: { meta: {} } as never })
    for (const text of results) expect(text).not.toContain(secret)
  })

  it('refuses an unknown session with NO_SESSION and exit code 1, and a bad command line with 2', async () => {
    const unknown = attachOnPipes(['pty-9'])
    unknown.child.stdin.end()
    // The message says which host holds which sessions, so a qualified name can be picked from it.
    expect(await unknown.finished).toMatchObject({
      code: 1,
      stderr: `dsh-terminal attach: no running host has session pty-9 (running sessions: host ${process.pid}: pty-1) (NO_SESSION)\n`,
    })
    const usage = attachOnPipes(['pty-1', 'pty-2'])
    usage.child.stdin.end()
    expect(await usage.finished).toMatchObject({ code: 2, stderr: expect.stringContaining('attach takes one session') })
  })

  it('asks only the named host for <host pid>:<session>, and names the running hosts for a pid none has', async () => {
    // A second host that accepts connections and never answers: asking it would stall attach for its timeout.
    const stuckProcess = spawn('sleep', ['600'])
    const stuckPid = stuckProcess.pid!
    let connections = 0
    const stuck = createServer((socket) => {
      connections++
      socket.on('error', () => {})
    })
    writeFileSync(join(host.runtime.dir, `${stuckPid}.token`), 'stuck-host-token-0123456789\n', { mode: 0o600 })
    await new Promise<void>((resolve) => stuck.listen(join(host.runtime.dir, `${stuckPid}.sock`), resolve))
    try {
      const attached = attachOnPipes([`${process.pid}:pty-1`, '--read-only'])
      attached.child.stdin.end()
      const done = await attached.finished
      expect(done.code, done.stderr).toBe(0)
      // Attached: the session's screen (its prompt) came through.
      expect(done.stdout).toContain('dsh> ')
      const none = attachOnPipes(['1:pty-1'])
      none.child.stdin.end()
      const hosts = [process.pid, stuckPid].sort((left, right) => left - right).join(', ')
      expect(await none.finished).toMatchObject({
        code: 1,
        stderr: `dsh-terminal attach: no running host has pid 1 (running hosts: ${hosts}; \`dsh-terminal attach\` lists their sessions) (NO_HOST)\n`,
      })
      expect(connections).toBe(0)
    } finally {
      await new Promise<void>((resolve) => stuck.close(() => resolve()))
      stuckProcess.kill('SIGKILL')
    }
  })
})
