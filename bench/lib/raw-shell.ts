// The raw floor every shell-level row is compared with: bash in node-pty with a marker prompt.
import { tmpdir } from 'node:os'
import { pty, type RawPty } from './raw-pty'

/** The marker the floor's PROMPT_COMMAND prints, then its prompt: the end of every command's output. */
export const MARKER_PROMPT = /\x1b\]133;D;\d+\x07(?:\x1b\[\?2004h)?dsh> (?:\x1b\[\?2004h)?$/
/**
 * The floor's environment: the host's, as node-pty passes it by default and as the provider passes it
 * to a session (minus credential-shaped names), plus the marker prompt. Variables change how programs
 * run: `PYTHONUNBUFFERED=1`, set on these machines, alone makes a Python round trip about 2× slower.
 */
export const RAW_ENV = {
  ...process.env,
  TERM: 'xterm-256color',
  HISTFILE: '',
  PS1: 'dsh> ',
  PROMPT_COMMAND: `printf '\\033]133;D;%s\\007' "$?"`,
}

/** Raw floor: bash in node-pty, settled the moment marker + prompt end the stream. */
export class RawShell {
  readonly term: RawPty
  readonly exited: Promise<void>
  #tail = ''
  #bytes = 0
  #waiter: ((bytes: number) => void) | undefined
  #pattern: RegExp = MARKER_PROMPT

  constructor() {
    this.term = pty.spawn('bash', ['--noprofile', '--norc', '-i'], { cwd: tmpdir(), env: RAW_ENV, cols: 160, rows: 40, encoding: null })
    this.exited = new Promise((resolve) => this.term.onExit(() => resolve()))
    this.term.onData((data: string | Buffer) => {
      const text = data.toString('latin1')
      this.#bytes += data.length
      this.#tail = (this.#tail + text).slice(-256)
      if (this.#waiter && this.#pattern.test(this.#tail)) {
        const done = this.#waiter
        this.#waiter = undefined
        done(this.#bytes)
      }
    })
  }

  /** Resolves (with the bytes received so far) once the stream ends with `pattern`. */
  next(pattern: RegExp = MARKER_PROMPT): Promise<number> {
    this.#pattern = pattern
    if (pattern.test(this.#tail)) return Promise.resolve(this.#bytes)
    return new Promise((resolve) => (this.#waiter = resolve))
  }

  /** Write a line and wait for the prompt that follows it (or for `pattern` at the end of the stream). */
  async run(line: string, pattern: RegExp = MARKER_PROMPT): Promise<number> {
    return this.type(`${line}\r`, pattern)
  }

  /** Write `data` as it is (no Enter) and wait for `pattern` at the end of the stream. */
  async type(data: string, pattern: RegExp = MARKER_PROMPT): Promise<number> {
    this.#tail = ''
    const next = this.next(pattern)
    this.term.write(data)
    return next
  }

  /** SIGHUP until the shell is gone (readline can lose one that lands before pselect). */
  async close(): Promise<void> {
    let done = false
    void this.exited.then(() => (done = true))
    for (let delay = 10; !done; delay = Math.min(delay * 2, 100)) {
      this.term.kill('SIGHUP')
      await Promise.race([this.exited, new Promise((resolve) => setTimeout(resolve, delay))])
    }
  }

  static async open(): Promise<RawShell> {
    const shell = new RawShell()
    await shell.next()
    return shell
  }
}
