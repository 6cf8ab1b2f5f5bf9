// A floor driven over a child's stdin and stdout: a marker-prompt bash that some command reaches
// (`ssh -tt … bash`, the bare PTY relay, the relay behind `ssh -T`). Settles as RawShell does.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { MARKER_PROMPT } from './raw-shell'

/** The argv that runs bench/children/pty-relay.ts with this process's Node and loader. */
export function ptyRelayCommand(): string[] {
  return [process.execPath, ...process.execArgv, new URL('../children/pty-relay.ts', import.meta.url).pathname]
}

/** A marker-prompt bash at the other end of `argv`'s stdio. */
export class StreamShell {
  readonly #child: ChildProcessWithoutNullStreams
  #tail = ''
  #waiter: (() => void) | undefined

  constructor(argv: readonly string[]) {
    const [file, ...args] = argv
    if (file === undefined) throw new Error('bench: a stream shell needs a command')
    this.#child = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'] })
    this.#child.stdout.setEncoding('latin1').on('data', (text: string) => {
      this.#tail = (this.#tail + text).slice(-256)
      if (this.#waiter && MARKER_PROMPT.test(this.#tail)) {
        const done = this.#waiter
        this.#waiter = undefined
        done()
      }
    })
    this.#child.stderr.resume()
  }

  /** Type `line` and Enter; resolves when the marker prompt ends the stream again. */
  run(line: string): Promise<void> {
    this.#tail = ''
    const next = new Promise<void>((resolve) => (this.#waiter = resolve))
    this.#child.stdin.write(`${line}\r`)
    return next
  }

  /** Until the first prompt (a login, the relay's start, bash's start). */
  ready(): Promise<void> {
    if (MARKER_PROMPT.test(this.#tail)) return Promise.resolve()
    return new Promise((resolve) => (this.#waiter = resolve))
  }

  /** `exit` to the shell (or the end of the relay's stdin), until the command is gone. */
  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.#child.once('exit', resolve))
    this.#child.stdin.end('exit\r')
    await exited
  }
}
