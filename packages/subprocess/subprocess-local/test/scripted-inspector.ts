import type { IPty } from 'node-pty'
import type { ForegroundFacts } from 'dsh-subprocess'
import type { MemberScan, ProcessInspector, ProcessRecord, TerminalModesSource } from '../src/internal'
import { LocalTerminal } from '../src/terminal'

/**
 * An inspector whose top-level process a test scripts stage by stage (`current`); it finds no
 * members, nobody alive and no dispositions. Subclasses say what the foreground looks like.
 */
export abstract class ScriptedInspector implements ProcessInspector {
  /** Reads of the top-level record (identify, record, and each inspection's own read). */
  reads = 0
  /** Foreground inspections started. */
  inspections = 0

  /** The top-level process's record as the test has set the stage. */
  protected abstract current(): ProcessRecord
  /** The foreground as the test has set the stage, from the top-level `record` just read. */
  protected abstract facts(record: ProcessRecord, sequence: number): ForegroundFacts | undefined

  #read(): ProcessRecord {
    this.reads += 1
    return this.current()
  }

  async identify(): Promise<ProcessRecord> {
    return this.#read()
  }
  async record(): Promise<ProcessRecord> {
    return this.#read()
  }
  async foreground(_shell: unknown, sequence: number): Promise<ForegroundFacts | undefined> {
    this.inspections += 1
    return this.facts(this.#read(), sequence)
  }
  async sameImage(_pid: number, _parent: number): Promise<boolean> {
    return false
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
}

/**
 * A `LocalTerminal` over a silent PTY of `pid` (no output, never exits) and the given inspector;
 * with `modes`, its flags are read there under the device path `ptsName`.
 */
export function terminalOver(inspector: ProcessInspector, pid: number, modes?: { source: TerminalModesSource; ptsName: string }): LocalTerminal {
  return terminalWithOutput(inspector, pid, modes).terminal
}

/** {@link terminalOver}, plus `emit`: the PTY then prints `text`, as the program would. */
export function terminalWithOutput(
  inspector: ProcessInspector,
  pid: number,
  modes?: { source: TerminalModesSource; ptsName: string },
): { terminal: LocalTerminal; emit: (text: string) => void } {
  const noop = () => ({ dispose() {} })
  const listeners: ((data: string) => void)[] = []
  const onData = (listener: (data: string) => void) => {
    listeners.push(listener)
    return { dispose() {} }
  }
  const pty = { pid, ptsName: modes?.ptsName, onData, onExit: noop, pause() {}, resume() {}, write() {}, resize() {}, kill() {} } as unknown as IPty
  const emit = (text: string) => {
    for (const listener of listeners) listener(text)
  }
  const terminal = new LocalTerminal({
    pty,
    inspector,
    graceMs: 100,
    killWaitMs: 100,
    backlogBytes: 1024,
    exitCleanup: false,
    report: () => {},
    onTerminated: () => {},
    modes: modes?.source,
  })
  return { terminal, emit }
}
