import { afterEach, describe, expect, it, vi } from 'vitest'
import type { ForegroundFacts } from 'dsh-subprocess'
import { eventually } from 'dsh-testkit'
import type { ProcessRecord } from '../src/internal'
import { ScriptedInspector, terminalOver } from './scripted-inspector'

// Spawn learns only the child's identity; whether it owns the PTY yet is checked by the first
// signal or inspection. Until the child ran setsid(), its stat shows the host's session and
// terminal, and its tpgid would name a group of the host's terminal.
const PID = 4242
const HOST_GROUP = 77
const CHILD_GROUP = PID

/** The child's stat as the inspector reads it: before setsid (the host's terminal), then after. */
class ForkingChild extends ScriptedInspector {
  owns = false

  protected current(): ProcessRecord {
    const base = { pid: PID, started: '5000', ppid: 1, zombie: false, stopped: false, threads: 1 }
    return this.owns
      ? { ...base, pgid: CHILD_GROUP, sid: PID, tpgid: CHILD_GROUP, ttyNr: 34816 }
      : { ...base, pgid: HOST_GROUP, sid: HOST_GROUP, tpgid: HOST_GROUP, ttyNr: 34817 }
  }

  protected facts(record: ProcessRecord, sequence: number): ForegroundFacts | undefined {
    if (record.sid !== record.pid) return undefined
    return {
      sequence,
      processGroupId: record.tpgid,
      isShellGroup: true,
      stdinWaitProof: 'proven',
      complete: true,
      waits: [],
      threads: [],
    }
  }
}

const terminal = (inspector: ForkingChild) => terminalOver(inspector, PID)

afterEach(() => {
  vi.restoreAllMocks()
})

describe('PTY ownership of a fresh child', () => {
  it('spawn reads the identity once and does not wait for setsid', async () => {
    const child = new ForkingChild()
    await terminal(child).settle()
    expect(child.reads).toBe(1)
  })

  it('a signal right after spawn waits for setsid and never reaches the host’s group', async () => {
    const kill = vi.spyOn(process, 'kill').mockImplementation(() => true)
    const child = new ForkingChild()
    const handle = terminal(child)
    await handle.settle()
    // The wait checks for ownership again and again; nothing is signalled while it does.
    const signalled = handle.signalForeground('SIGINT')
    const reads = child.reads
    await eventually(() => child.reads > reads + 3, 'a few ownership checks')
    expect(kill).not.toHaveBeenCalled()
    child.owns = true
    expect(await signalled).toBe(CHILD_GROUP)
    expect(kill.mock.calls).toEqual([[-CHILD_GROUP, 'SIGINT']])
  })

  it('an inspection right after spawn reports the child’s own group once it owns the PTY', async () => {
    const child = new ForkingChild()
    const handle = terminal(child)
    await handle.settle()
    const facts = handle.inspectForeground()
    const reads = child.reads
    await eventually(() => child.reads > reads + 3, 'a few ownership checks')
    expect(child.inspections).toBe(0)
    child.owns = true
    expect(await facts).toMatchObject({ processGroupId: CHILD_GROUP, isShellGroup: true })
    // Once seen, ownership is not checked again.
    const seen = child.reads
    await handle.inspectForeground()
    expect(child.reads).toBe(seen + 1)
  })
})
