import { readdirSync, readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Agent } from 'dsh-agent'
import { commandLine, descendants, eventually, isAlive, processName, stillRunning } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Composition } from '../src/compose/load-config'
import { DEFAULT_CONFIG, load, REPO_ROOT, tempDir } from './helpers'

// The main tool paths under examples/durable.yml: terminals in a session host (dsh-subprocess-remote)
// and detachedTtlMs on the registry. The overlay is used as it ships, with two changes for a test:
// its include names the repository's cordis.yml by absolute path, and the session host gets a socket
// of its own (never the user's, which another host of another version may hold) that idles out quickly.

const DURABLE = join(REPO_ROOT, 'examples/durable.yml')
const PROMPT = 'dsh> '

let composition: Composition
let socketPath: string
let removeDir: () => Promise<void>
const agents: Agent[] = []

/** Live session hosts serving `socketPath` (the provider starts them detached, so they are no child of ours). */
function sessionHosts(): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => isAlive(pid) && (commandLine(pid) ?? []).includes(socketPath))
}

beforeAll(async () => {
  const { dir, remove } = await tempDir('dsh-durable-')
  removeDir = remove
  socketPath = join(dir, 'run', 'session-host.sock')
  const overlay = readFileSync(DURABLE, 'utf8')
    .replace('path: ../cordis.yml', `path: ${JSON.stringify(DEFAULT_CONFIG)}`)
    .replace(/idleExitMs: \d+/, `idleExitMs: 200\n              socketPath: ${JSON.stringify(socketPath)}`)
  expect(overlay).toContain(socketPath)
  const file = join(dir, 'durable.yml')
  await writeFile(file, overlay)
  composition = await load(file)
})

afterAll(async () => {
  for (const agent of agents) await agent.dispose()
  await composition?.dispose()
  // With no client and no terminal, the session host exits by itself.
  await eventually(() => sessionHosts().length === 0, 'the session host exited')
  await removeDir?.()
})

async function agent(): Promise<Agent> {
  const created = await composition.agents.create()
  agents.push(created)
  return created
}

async function call(owner: Agent, name: string, args: Record<string, unknown> = {}) {
  const result = await composition.tools.execute({ callId: `durable-${name}`, name, arguments: args, agent: owner })
  return { ...result, text: result.content.map((block) => block.text).join('\n') }
}

describe('the tools under examples/durable.yml', () => {
  it('open, state between sends, exit status, read, signal, background job and close', async () => {
    const owner = await agent()
    const opened = await call(owner, 'terminal_open', { type: 'shell', name: 'main' })
    // The motd may carry the sandbox's note on this checkout being the server's own installation.
    expect(opened.text.startsWith('started terminal session pty-1 (main) [type: shell]\n')).toBe(true)
    expect(opened.text.endsWith(PROMPT)).toBe(true)
    const sessionId = 'pty-1'
    const pid = opened.meta?.pid as number
    expect(sessionHosts()).toHaveLength(1)

    const state = await call(owner, 'terminal_send', { sessionId, text: 'cd /usr && export DSH_DURABLE_PROBE=kept' })
    expect(state.text).toBe(`cd /usr && export DSH_DURABLE_PROBE=kept\n${PROMPT}\n[wait: stdin_read]\n[input: prompt]\n[exit: 0]\n[session: running]`)
    const probe = await call(owner, 'terminal_send', { sessionId, text: 'pwd; echo "$DSH_DURABLE_PROBE"; false' })
    expect(probe.text).toBe(`pwd; echo "$DSH_DURABLE_PROBE"; false\n/usr\nkept\n${PROMPT}\n[wait: stdin_read]\n[input: prompt]\n[exit: 1]\n[session: running]`)

    const read = await call(owner, 'terminal_read', { sessionId, count: 3 })
    expect(read.text).toContain('/usr\nkept')

    const sleeping = call(owner, 'terminal_send', { sessionId, text: 'sleep 30', timeoutMs: 60_000 })
    await eventually(() => descendants(pid).some((child) => processName(child.pid) === 'sleep'), 'the sleep runs')
    const signalled = await call(owner, 'terminal_signal', { sessionId, signal: 'SIGINT' })
    expect(signalled.isError).toBeFalsy()
    expect((await sleeping).text).toContain('[exit: 130]')

    const job = await call(owner, 'terminal_send', { sessionId, text: 'echo from-the-job', run_in_background: true })
    const jobId = job.meta?.jobId as string
    const output = await call(owner, 'job_output', { jobId, wait: true })
    expect(output.text).toContain('from-the-job')

    await call(owner, 'terminal_send', { sessionId, text: 'sleep 1000 &' })
    const tree = descendants(pid)
    const closed = await call(owner, 'terminal_close', { sessionId })
    expect(closed.text).toBe(`closed terminal session ${sessionId}`)
    expect(isAlive(pid)).toBe(false)
    expect(tree.filter((each) => stillRunning(each))).toEqual([])
  })

  it("detaches an ended agent's session; another agent resumes it with the send's output", async () => {
    const first = await agent()
    const opened = await call(first, 'terminal_open', { type: 'shell' })
    const sessionId = opened.meta?.sessionId as string
    const pid = opened.meta?.pid as number
    const running = call(first, 'terminal_send', { sessionId, text: 'sleep 1; echo finished' })
    await eventually(() => descendants(pid).some((child) => processName(child.pid) === 'sleep'), 'the sleep runs')
    await first.dispose()
    await running
    const second = await agent()
    expect((await call(second, 'terminal_list')).text).toMatch(new RegExp(`^${sessionId} \\[shell\\] running detached \\d+s ago`))
    const resumed = await call(second, 'terminal_open', { type: 'shell', resume: sessionId })
    expect(resumed.text.match(/^finished$/gm)).toHaveLength(1)
    expect(resumed.text).toContain('[exit: 0]')
    await call(second, 'terminal_close', { sessionId })
    expect(isAlive(pid)).toBe(false)
  })
})
