import type { IPty } from 'node-pty'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { ForegroundFacts } from 'dsh-subprocess'
import type { MemberScan, ProcessInspector, ProcessRecord } from 'dsh-subprocess-local'
import { LocalTerminal } from '../src/terminal'

// Spawn learns only the child's identity; whether it owns the PTY yet is checked by the first
// signal or inspection. Until the child ran setsid(), its stat shows the host's session and
// terminal, and its tpgid would name a group of the host's terminal.
const PID = 4242
const HOST_GROUP = 77
const CHILD_GROUP = PID

/** The child's stat as the inspector reads it: before setsid (the host's terminal), then after. */
class ForkingChild implements ProcessInspector {
  readonly stdinWaitSupported = true
  owns = false
  reads = 0
  inspections = 0

  #record(): ProcessRecord {
    this.reads += 1
    const base = { pid: PID, started: '5000', ppid: 1, zombie: false, stopped: false, threads: 1 }
    return this.owns
      ? { ...base, pgid: CHILD_GROUP, sid: PID, tpgid: CHILD_GROUP, ttyNr: 34816 }
      : { ...base, pgid: HOST_GROUP, sid: HOST_GROUP, tpgid: HOST_GROUP, ttyNr: 34817 }
  }

  async identify(): Promise<ProcessRecord> {
    return this.#record()
  }
  async record(): Promise<ProcessRecord> {
    return this.#record()
  }
  async foreground(_shell: unknown, sequence: number): Promise<ForegroundFacts | undefined> {
    this.inspections += 1
    const record = this.#record()
    if (record.sid !== record.pid) return undefined
    return { sequence, processGroupId: record.tpgid, isShellGroup: true, stdinWaitSupported: true, stdinWaitProven: true, complete: true, waits: [], threads: [] }
  }
  async members(): Promise<MemberScan> {
    return { members: [] }
  }
  membersSync(): MemberScan {
    return { members: [] }
  }
  async alive() {
    return []
  }
  aliveSync() {
    return []
  }
  async disposition() {
    return undefined
  }
  async sameImage() {
    return false
  }
}

function fakePty(): IPty {
  const noop = () => ({ dispose() {} })
  return { pid: PID, onData: noop, onExit: noop, pause() {}, resume() {}, write() {}, resize() {}, kill() {} } as unknown as IPty
}

function terminal(inspector: ProcessInspector): LocalTerminal {
  return new LocalTerminal({
    pty: fakePty(),
    inspector,
    graceMs: 100,
    killWaitMs: 100,
    backlogBytes: 1024,
    exitCleanup: false,
    report: () => {},
    onTerminated: () => {},
  })
}

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
    const signalled = handle.signalForeground('SIGINT')
    await new Promise((resolve) => setTimeout(resolve, 5))
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
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(child.inspections).toBe(0)
    child.owns = true
    expect(await facts).toMatchObject({ processGroupId: CHILD_GROUP, isShellGroup: true })
    // Once seen, ownership is not checked again.
    const reads = child.reads
    await handle.inspectForeground()
    expect(child.reads).toBe(reads + 1)
  })
})
