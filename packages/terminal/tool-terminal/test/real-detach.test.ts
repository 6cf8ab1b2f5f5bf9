import type { Agent } from 'dsh-agent'
import { asTerminalSessionId } from 'dsh-terminal'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { children, descendants, eventually, isAlive, stillRunning } from 'dsh-testkit'
import { mountRealTools, type RealTools, text } from './real-stack'

// Detached sessions on a real bash (detachedTtlMs > 0): an agent that ends leaves its sessions
// running; another agent of the same host lists and resumes them, and sees what happened meanwhile.

const PROMPT = 'dsh> '

describe('a detached session on a real bash', () => {
  let stack: RealTools
  const agents: Agent[] = []
  const agent = async () => {
    const created = await stack.root.agents.create()
    agents.push(created)
    return created
  }

  beforeAll(async () => {
    stack = await mountRealTools({ detachedTtlMs: 600_000 })
  })

  afterAll(async () => {
    for (const each of agents) await each.dispose()
    await stack.dispose()
    expect(children(process.pid).filter(isAlive)).toEqual([])
  })

  it("keeps a send running through its agent's end; the adopter gets its output and exit, with cwd and env kept", async () => {
    const first = await agent()
    const opened = await stack.call(first, 'terminal_open', { type: 'shell', name: 'main', cwd: '/tmp' })
    const pid = opened.meta?.pid as number
    const id = asTerminalSessionId(opened.meta?.sessionId as string)
    await stack.call(first, 'terminal_send', { sessionId: id, text: 'cd /usr && export DSH_DETACH_PROBE=kept' })
    const running = stack.call(first, 'terminal_send', { sessionId: id, text: 'sleep 1; echo finished' })
    await eventually(async () => (await stack.root.terminals.inputState(first, id))?.kind === 'busy', 'the sleep runs')
    await first.dispose()
    // The send of the agent that ended returns to nobody; it was not interrupted (no SIGINT).
    await running
    expect(isAlive(pid)).toBe(true)

    const second = await agent()
    const third = await agent()
    const listed = text(await stack.call(second, 'terminal_list'))
    expect(listed).toMatch(new RegExp(`^${id} \\(main\\) \\[shell\\] running detached \\d+s ago pid=${pid} `))

    const resumed = await stack.call(second, 'terminal_open', { type: 'shell', resume: id })
    expect(resumed.isError).toBeFalsy()
    const shown = text(resumed)
    expect(shown.startsWith(`resumed terminal session ${id} (main) [type: shell]\n`)).toBe(true)
    expect(shown).toContain('sleep 1; echo finished')
    expect(shown.match(/^finished$/gm)).toHaveLength(1)
    expect(shown).toContain('[wait: stdin_read]\n[input: prompt]\n[exit: 0]\n[session: running]')
    expect(resumed.meta).toMatchObject({ sessionId: id, resumed: true, waitReason: 'stdin_read', exitCode: 0 })

    const late = await stack.call(third, 'terminal_open', { type: 'shell', resume: id })
    expect(late.error?.code).toBe('SESSION_ADOPTED')
    const unknown = await stack.call(third, 'terminal_open', { type: 'shell', resume: 'pty-999' })
    expect({ code: unknown.error?.code, names: text(unknown).includes('terminal_list') }).toEqual({ code: 'NO_SESSION', names: true })

    // Nothing is repeated: the next send starts after what the resume showed.
    const probe = await stack.call(second, 'terminal_send', { sessionId: id, text: 'pwd; echo "$DSH_DETACH_PROBE"' })
    expect(text(probe)).toBe(`pwd; echo "$DSH_DETACH_PROBE"\n/usr\nkept\n${PROMPT}\n[wait: stdin_read]\n[input: prompt]\n[exit: 0]\n[session: running]`)
    await stack.call(second, 'terminal_close', { sessionId: id })
    expect(isAlive(pid)).toBe(false)
  })

  it('keeps a running REPL: the adopter finds python waiting', async () => {
    const first = await agent()
    const opened = await stack.call(first, 'terminal_open', { type: 'shell' })
    const id = opened.meta?.sessionId as string
    await stack.call(first, 'terminal_send', { sessionId: id, text: 'python3 -q' })
    await stack.call(first, 'terminal_send', { sessionId: id, text: 'x = 41' })
    await first.dispose()
    const second = await agent()
    const resumed = await stack.call(second, 'terminal_open', { type: 'shell', resume: id })
    expect(resumed.meta?.input).toMatchObject({ kind: 'program', program: { name: 'python3' } })
    const answer = await stack.call(second, 'terminal_send', { sessionId: id, text: 'x + 1' })
    expect(text(answer)).toContain('\n42\n')
    await stack.call(second, 'terminal_close', { sessionId: id })
  })
})

describe('a detached session nobody resumes', () => {
  it('closes at its TTL with its whole tree', async () => {
    const stack = await mountRealTools({ detachedTtlMs: 300 })
    try {
      const first = await stack.root.agents.create()
      const opened = await stack.call(first, 'terminal_open', { type: 'shell' })
      const pid = opened.meta?.pid as number
      const id = opened.meta?.sessionId as string
      await stack.call(first, 'terminal_send', { sessionId: id, text: 'sleep 1000 &' })
      const tree = descendants(pid)
      expect(tree.length).toBeGreaterThan(0)
      await first.dispose()
      const second = await stack.root.agents.create()
      expect(stack.root.terminals.list(second).map((s) => s.sessionId)).toEqual([id])
      await eventually(() => stack.root.terminals.list(second).length === 0, 'the detached session closed at its TTL')
      expect(isAlive(pid)).toBe(false)
      expect(tree.filter((p) => stillRunning(p))).toEqual([])
      await second.dispose()
    } finally {
      await stack.dispose()
    }
  })
})
