import { eventually } from 'dsh-testkit'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { ForegroundFacts } from 'dsh-subprocess'
import type { ProcessRecord } from '../src/internal'
import { ScriptedInspector, terminalOver, terminalWithOutput } from './scripted-inspector'

// A signal resolved while a command is between fork and exec misses it: first the shell's own
// group is still in front while bash forks, then the job's group is led by a fork that still has
// bash's handlers (a SIGINT is swallowed). The provider waits until the foreground settled.
const SHELL = 4242
const JOB = 5151

type Stage = 'forking' | 'pre-exec' | 'running' | 'at-prompt' | 'busy-builtin'

/** The foreground as the inspector sees it, stage by stage. */
class Foreground extends ScriptedInspector {
  stage: Stage = 'forking'
  /** `unprovable`: a platform that cannot watch the transition (macOS). */
  proof: 'provable' | 'unprovable' = 'provable'

  protected current(): ProcessRecord {
    const front = this.stage === 'forking' || this.stage === 'at-prompt' || this.stage === 'busy-builtin' ? SHELL : JOB
    return { pid: SHELL, started: '5000', ppid: 1, pgid: SHELL, sid: SHELL, tpgid: front, ttyNr: 34816, zombie: false, stopped: false, threads: 1 }
  }

  protected facts(record: ProcessRecord, sequence: number): ForegroundFacts {
    const front = record.tpgid
    return {
      sequence,
      processGroupId: front,
      isShellGroup: front === SHELL,
      stdinWaitProof: this.proof === 'unprovable' ? 'unprovable' : this.stage === 'at-prompt' ? 'proven' : 'unproven',
      complete: true,
      waits: [],
      threads: [],
    }
  }

  override async sameImage(pid: number, parent: number): Promise<boolean> {
    return pid === JOB && parent === SHELL && this.stage === 'pre-exec'
  }
}

const terminal = (inspector: Foreground) => terminalOver(inspector, SHELL)

/** Until the signal's wait has looked at the foreground a few more times (bounded by `eventually`). */
async function lookedAgain(foreground: Foreground): Promise<void> {
  const looks = () => foreground.reads + foreground.inspections
  const before = looks()
  await eventually(() => looks() > before + 3, 'a few more looks at the foreground')
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe('a signal during a fork-to-exec transition', () => {
  it('waits while bash forks and while the job has not exec’d, then reaches the job', async () => {
    const kill = vi.spyOn(process, 'kill').mockImplementation(() => true)
    const foreground = new Foreground()
    const handle = terminal(foreground)
    await handle.settle()
    const signalled = handle.signalForeground('SIGINT')
    // The wait looks again and again while bash forks, then while the job has not exec'd: no signal yet.
    await lookedAgain(foreground)
    foreground.stage = 'pre-exec'
    await lookedAgain(foreground)
    expect(kill).not.toHaveBeenCalled()
    foreground.stage = 'running'
    expect(await signalled).toBe(JOB)
    expect(kill.mock.calls).toEqual([[-JOB, 'SIGINT']])
  })

  it('goes at once when the job already runs its program or the shell waits at its prompt', async () => {
    const kill = vi.spyOn(process, 'kill').mockImplementation(() => true)
    const foreground = new Foreground()
    foreground.stage = 'running'
    const handle = terminal(foreground)
    await handle.settle()
    expect(await handle.signalForeground('SIGTSTP')).toBe(JOB)
    foreground.stage = 'at-prompt'
    expect(await handle.signalForeground('SIGINT')).toBe(SHELL)
    expect(kill.mock.calls).toEqual([
      [-JOB, 'SIGTSTP'],
      [-SHELL, 'SIGINT'],
    ])
  })

  it('a transition that never ends (a builtin loop in the shell) delays the signal only a bounded time', async () => {
    const kill = vi.spyOn(process, 'kill').mockImplementation(() => true)
    const foreground = new Foreground()
    foreground.stage = 'busy-builtin'
    const handle = terminal(foreground)
    await handle.settle()
    expect(await handle.signalForeground('SIGINT')).toBe(SHELL)
    expect(kill.mock.calls).toEqual([[-SHELL, 'SIGINT']])
    expect(foreground.inspections).toBeGreaterThan(1)
  })
})

describe('a SIGINT that may have been swallowed in a transition', () => {
  it('goes once more when the platform cannot watch the transition and nothing happened', async () => {
    const kill = vi.spyOn(process, 'kill').mockImplementation(() => true)
    const foreground = new Foreground()
    foreground.stage = 'running'
    foreground.proof = 'unprovable'
    const handle = terminal(foreground)
    await handle.settle()
    expect(await handle.signalForeground('SIGINT')).toBe(JOB)
    // The first one may have landed before exec and been swallowed: a second one goes to the same group.
    expect(kill.mock.calls).toEqual([
      [-JOB, 'SIGINT'],
      [-JOB, 'SIGINT'],
    ])
  })

  it('does not repeat a SIGINT that had a visible effect, nor one the transition wait saw land', async () => {
    const kill = vi.spyOn(process, 'kill').mockImplementation(() => true)
    const foreground = new Foreground()
    foreground.stage = 'running'
    foreground.proof = 'unprovable'
    const { terminal: handle, emit } = terminalWithOutput(foreground, SHELL)
    await handle.settle()
    const signalled = handle.signalForeground('SIGINT')
    await eventually(() => kill.mock.calls.length === 1, 'the first SIGINT')
    emit('make: *** [all] Interrupt\r\n')
    expect(await signalled).toBe(JOB)
    foreground.proof = 'provable'
    expect(await handle.signalForeground('SIGINT')).toBe(JOB)
    expect(kill.mock.calls).toEqual([
      [-JOB, 'SIGINT'],
      [-JOB, 'SIGINT'],
    ])
  })

  it('does not repeat one aimed at the shell, nor once another group is in front', async () => {
    const kill = vi.spyOn(process, 'kill').mockImplementation(() => true)
    const foreground = new Foreground()
    foreground.proof = 'unprovable'
    foreground.stage = 'at-prompt'
    const handle = terminal(foreground)
    await handle.settle()
    expect(await handle.signalForeground('SIGINT')).toBe(SHELL)
    foreground.stage = 'running'
    const signalled = handle.signalForeground('SIGINT')
    await eventually(() => kill.mock.calls.length === 2, 'the SIGINT to the job')
    foreground.stage = 'at-prompt'
    expect(await signalled).toBe(JOB)
    expect(kill.mock.calls).toEqual([
      [-SHELL, 'SIGINT'],
      [-JOB, 'SIGINT'],
    ])
  })
})
