// A terminal handle without a process: it answers each write of `true` + Enter with the bytes bash
// sends for it (the echo, then the marker and the prompt), one event-loop turn later, as a PTY read
// would. A ShellSession over it runs its whole send path (send machine, output pipeline, screen,
// earlier-output buffer, input look) with no PTY, no kernel and no bash: the backend's own cost.
import type { ForegroundFacts, SubprocessTerminalHandle, TerminalExit, TerminalOutputListener } from '../../packages/subprocess/subprocess/src/index'

/** The marker nonce the replayed prompts carry (any six digits; the session is told the same). */
export const REPLAY_NONCE = 424_242
/** Exit status 0 of the nonce's shell, as `PROMPT_COMMAND` prints it. */
const PROMPT = `\x1b]133;D;${REPLAY_NONCE}000\x07\x1b[?2004hdsh> `
/** What bash sends after `true` + Enter, recorded from a node-pty bash (one read). */
const TRUE_REPLY = `true\r\n\x1b[?2004l\r${PROMPT}`
/** The fake shell's pid and process group (never signalled: the handle has no process). */
const PID = 2 ** 22 - 1

/** The shell idle at its prompt as an inspection reports it: its own group, proven blocked reading. */
const IDLE_FACTS: ForegroundFacts = {
  sequence: 1,
  processGroupId: PID,
  isShellGroup: true,
  stdinWaitProof: 'proven',
  complete: true,
  waits: [],
  threads: [],
  program: { pid: PID, started: '1', role: 'waiting', command: 'bash' },
}

/** A handle whose only program is a recording of bash at its prompt answering `true`. */
export class ReplayHandle implements SubprocessTerminalHandle {
  readonly pid = PID
  readonly limits = {}
  exit: TerminalExit | undefined
  readonly done: Promise<TerminalExit>
  #listener: TerminalOutputListener | undefined
  #end!: (exit: TerminalExit) => void

  constructor() {
    this.done = new Promise((resolve) => (this.#end = resolve))
  }

  onOutput(listener: TerminalOutputListener): () => void {
    this.#listener = listener
    // Subscribing replays what arrived before: the first prompt.
    listener(Buffer.from(PROMPT, 'latin1'))
    return () => (this.#listener = undefined)
  }

  async write(data: string | Uint8Array): Promise<void> {
    if (data !== 'true\r') throw new Error(`bench: the replay handle answers only \`true\` + Enter, not ${JSON.stringify(data)}`)
    const reply = Buffer.from(TRUE_REPLY, 'latin1')
    setImmediate(() => this.#listener?.(reply))
  }

  resize(): void {}

  async inspectForeground(): Promise<ForegroundFacts | undefined> {
    return IDLE_FACTS
  }

  async signalForeground(): Promise<number> {
    return PID
  }

  pinShellGroup(): void {}

  async terminate(): Promise<void> {
    this.exit = { exitCode: 0, signal: null }
    this.#end(this.exit)
  }
}
