import { Context } from '@deepseek-ai/cordis'
import * as agentPlugin from 'dsh-agent'
import * as terminalPlugin from 'dsh-terminal'
import { describe, expect, it } from 'vitest'
import { SNAPSHOT_PGID, SNAPSHOT_TYPE } from '../src/backend'
import * as snapshotPlugin from '../src/index'

async function mount() {
  const root = new Context()
  await root.plugin(agentPlugin)
  await root.plugin(terminalPlugin)
  await root.plugin(snapshotPlugin)
  const agent = await root.agents.create()
  const { sessionId, motd } = await root.terminals.spawn(agent, { type: SNAPSHOT_TYPE })
  const run = async (text: string, submit = true) => await root.terminals.startSend(agent, sessionId, { text, submit }).done
  return { root, agent, sessionId, motd, run }
}

describe('the snapshot terminal', () => {
  it('answers each command the same way on every machine', async () => {
    const { run, motd, sessionId } = await mount()
    expect(motd).toBe(`snapshot terminal ${sessionId} ready`)
    expect(await run('seq 3')).toEqual({
      viewport: 'seq 3\n1\n2\n3',
      waitReason: 'stdin_read',
      sessionStatus: { kind: 'running' },
      truncated: false,
      exitCode: 0,
    })
    expect((await run('make it so')).viewport).toBe('make it so\nok: make it so')
    expect(await run('half', false)).toMatchObject({ viewport: 'half', waitReason: 'stdin_read' })
    expect((await run('seq 5000')).viewport.split('\n')).toHaveLength(1001)
    expect(await run('exit 3')).toMatchObject({ waitReason: 'session_exit', sessionStatus: { kind: 'exited', exitCode: 3, signal: null } })
    expect(await run('seq 1')).toMatchObject({ viewport: '', waitReason: 'session_exit' })
  })

  it('keeps a sleep running until a signal ends it with ^C', async () => {
    const { root, agent, sessionId } = await mount()
    const handle = root.terminals.startSend(agent, sessionId, { text: 'sleep', submit: true })
    expect(await root.terminals.signal(agent, sessionId, 'SIGINT')).toEqual({ delivered: true, targetPgid: SNAPSHOT_PGID })
    expect(await handle.done).toMatchObject({ viewport: 'sleep\n^C', waitReason: 'stdin_read', exitCode: 130 })
    expect(root.terminals.read(agent, sessionId, { fromLine: 1, count: 10 })).toMatchObject({ text: 'sleep\n^C', lineBegin: 1, lineEnd: 2, totalLines: 2 })
  })

  it('cannot be watched by a person: it has no screen', async () => {
    const { root, agent, sessionId } = await mount()
    await expect(root.terminals.observeAsHuman(agent, sessionId, { onOutput() {}, onEnd() {} })).rejects.toMatchObject({ code: 'NOT_WATCHABLE' })
  })
})
