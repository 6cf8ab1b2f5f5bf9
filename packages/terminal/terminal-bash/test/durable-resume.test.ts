import { asTerminalSessionId } from 'dsh-terminal'
import { children, descendants, eventually, isAlive, processName } from 'dsh-testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { DurableLab } from './support/durable-lab'
import { PATIENT, startStack, type Stack } from './support/stack'

// Resume across host processes, against the declared durable seam: two stacks are two host
// processes on one provider (DurableLab: real local terminals with the durable contract), and host
// A is cut off in the middle of a send. Host B lists the session, adopts it and rebuilds the shell
// from the replay and the facts A stored after each delivered result.

const stacks: Stack[] = []
afterEach(async () => {
  for (const stack of stacks.splice(0).reverse()) await stack.dispose()
  expect(children(process.pid).filter(isAlive)).toEqual([])
})

async function host(lab: DurableLab, client: string): Promise<Stack> {
  const stack = await startStack(PATIENT, { provider: { plugin: lab.plugin(client) }, terminals: { detachedTtlMs: 600_000 } })
  stacks.push(stack)
  return stack
}

describe('a shell resumed by another host process', () => {
  it("gets the cut-off send's output and end once, with cwd, env and scrollback kept; a second adopter is refused", async () => {
    const lab = new DurableLab()
    const a = await host(lab, 'a')
    const { sessionId, pid } = await a.open({ name: 'build' })
    await a.run(sessionId, 'cd /tmp && export DSH_LAB=kept')
    expect((await a.run(sessionId, 'echo delivered-$((6*7))')).viewport).toContain('delivered-42')
    const cut = a.send(sessionId, 'sleep 0.5; echo after-$((6*7))')
    await eventually(() => descendants(pid as number).some((child) => processName(child.pid) === 'sleep'), 'the sleep runs')
    lab.crash('a')
    void cut.done.catch(() => undefined)

    const b = await host(lab, 'b')
    const listed = await b.terminals.listElsewhere(b.agent)
    expect(listed.map((s) => [s.sessionId, s.name, s.pid, typeof s.detachedAt])).toEqual([[sessionId, 'build', pid, 'number']])
    // B never mints the id a detached terminal holds.
    expect((await b.open()).sessionId).not.toBe(sessionId)

    const c = await host(lab, 'c')
    const [won, lost] = await Promise.allSettled([b.terminals.resume(b.agent, sessionId, 'shell'), c.terminals.resume(c.agent, sessionId, 'shell')])
    expect(won).toMatchObject({ status: 'fulfilled', value: { sessionId, name: 'build', pid } })
    expect(lost).toMatchObject({ status: 'rejected', reason: { code: 'SESSION_ADOPTED' } })

    const resumed = await b.run(sessionId, '', { submit: false })
    const shown = `${resumed.earlierOutput ?? ''}${resumed.viewport}`
    expect(shown.match(/after-42/g)).toHaveLength(1)
    expect(shown).not.toContain('delivered-42')
    expect(resumed).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
    const state = await b.run(sessionId, 'pwd; echo "$DSH_LAB"')
    expect(state.viewport).toContain('/tmp\nkept')
    expect(state.earlierOutput).toBeUndefined()
    // The scrollback was rebuilt from the replay: what A delivered is still there to read.
    expect(b.terminals.read(b.agent, asTerminalSessionId(sessionId), { offset: 0, count: 50 }).text).toContain('delivered-42')

    // Host B shuts down gracefully (its client went, then the process exits): the session is left
    // to the provider, not closed, and a next host resumes it again.
    await b.agent.dispose()
    stacks.splice(stacks.indexOf(b), 1)
    await b.dispose()
    lab.crash('b')
    expect(isAlive(pid as number)).toBe(true)
    const d = await host(lab, 'd')
    await d.terminals.resume(d.agent, sessionId, 'shell')
    expect((await d.run(sessionId, 'echo "$DSH_LAB-again"')).viewport).toContain('\nkept-again\n')
    await d.terminals.close(d.agent, sessionId)
    expect(isAlive(pid as number)).toBe(false)
  })
})
