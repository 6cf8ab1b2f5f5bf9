import { describe, expect, it } from 'vitest'
import type { ForegroundFacts, TerminalModes } from 'dsh-subprocess'
import type { ProcessRecord, TerminalModesSource } from '../src/internal'
import { ScriptedInspector, terminalOver } from './scripted-inspector'

// A device path names this PTY only while the PTY is open; closing it first takes the terminal
// away from the top-level process's session, and only then can the number be reused. The handle
// keeps a read only if the top-level process held the same terminal before and after it.
const SHELL = 4242
const PTS3 = (136 << 8) | 3
const PTS4 = (136 << 8) | 4

/** The top-level process owns `tty` (0: the PTY was closed under it). */
class Shell extends ScriptedInspector {
  tty = PTS3

  protected current(): ProcessRecord {
    const owns = this.tty !== 0
    return {
      pid: SHELL,
      started: '5000',
      ppid: 1,
      pgid: SHELL,
      sid: SHELL,
      tpgid: owns ? SHELL : -1,
      ttyNr: this.tty,
      zombie: false,
      stopped: false,
      threads: 1,
    }
  }

  protected facts(record: ProcessRecord, sequence: number): ForegroundFacts | undefined {
    if (record.tpgid <= 0) return undefined
    return { sequence, processGroupId: SHELL, isShellGroup: true, stdinWaitProof: 'proven', complete: true, waits: [], threads: [] }
  }
}

/** A modes source that runs `during` while it reads, and records what it was asked. */
function source(during: () => void = () => {}): TerminalModesSource & { asked: Array<[string, number | undefined]> } {
  const asked: Array<[string, number | undefined]> = []
  return {
    asked,
    async read(device, terminal): Promise<TerminalModes> {
      asked.push([device, terminal])
      during()
      return { echo: false, canonical: true }
    },
    dispose() {},
  }
}

describe('inspectForeground({ terminalModes })', () => {
  it('reads the flags only when asked, through the PTY path checked against the controlling terminal', async () => {
    const modes = source()
    const handle = terminalOver(new Shell(), SHELL, { source: modes, ptsName: '/dev/pts/3' })
    await handle.settle()
    expect((await handle.inspectForeground())?.terminalModes).toBeUndefined()
    expect(modes.asked).toEqual([])
    expect((await handle.inspectForeground({ terminalModes: true }))?.terminalModes).toEqual({ echo: false, canonical: true })
    expect(modes.asked).toEqual([['/dev/pts/3', PTS3]])
  })

  it('drops a read during which the PTY was closed or the terminal changed', async () => {
    const shell = new Shell()
    const closing = terminalOver(shell, SHELL, {
      source: source(() => {
        shell.tty = 0
      }),
      ptsName: '/dev/pts/3',
    })
    await closing.settle()
    expect((await closing.inspectForeground({ terminalModes: true }))?.terminalModes).toBeUndefined()

    const moved = new Shell()
    const elsewhere = terminalOver(moved, SHELL, {
      source: source(() => {
        moved.tty = PTS4
      }),
      ptsName: '/dev/pts/3',
    })
    await elsewhere.settle()
    const facts = await elsewhere.inspectForeground({ terminalModes: true })
    expect(facts?.processGroupId).toBe(SHELL)
    expect(facts?.terminalModes).toBeUndefined()
  })

  it('asks nothing without a device path or a source', async () => {
    const modes = source()
    const pathless = terminalOver(new Shell(), SHELL, { source: modes, ptsName: '' })
    await pathless.settle()
    expect((await pathless.inspectForeground({ terminalModes: true }))?.terminalModes).toBeUndefined()
    const sourceless = terminalOver(new Shell(), SHELL)
    await sourceless.settle()
    expect((await sourceless.inspectForeground({ terminalModes: true }))?.terminalModes).toBeUndefined()
    expect(modes.asked).toEqual([])
  })
})
