import { type ChildProcessByStdio, spawn } from 'node:child_process'
import type { Socket } from 'node:net'
import type { Readable, Writable } from 'node:stream'
import { settledWithin } from 'dsh-basics'

/** Longest wait for one reply before the helper is replaced: a stuck helper must not hold every later read. */
export const REPLY_TIMEOUT_MS = 2000

/** The process a {@link LineHelper} runs, and how long it may take to answer. */
export interface LineHelperSpec {
  /** Program to run (an absolute path, or a name looked up on `env.PATH`). */
  readonly file: string
  /** Its arguments. */
  readonly args: readonly string[]
  /** Its whole environment (nothing of the host's is inherited). */
  readonly env: NodeJS.ProcessEnv
  /** Longest wait for one reply (default {@link REPLY_TIMEOUT_MS}). */
  readonly replyTimeoutMs?: number | undefined
  /**
   * A line the process prints once it is ready, before any reply. A process that prints anything
   * else first, or exits before it, cannot serve here: it is never started again. One that is
   * merely slow to greet is treated like a stuck one (killed, and started afresh on the next request).
   */
  readonly greeting?: string | undefined
}

type Helper = ChildProcessByStdio<Writable, Readable, null>

/**
 * One long-lived process that answers each line written to its stdin with one line on its stdout,
 * in order. Started on first use in a process group of its own (no terminal); it must leave when
 * its stdin closes, which the host's death also does. While nothing is outstanding it does not keep
 * the host alive. A helper that died or did not answer within the bound is killed with its group and
 * replaced by the next request; everything outstanding then resolves `undefined`. Never rejects.
 */
export class LineHelper {
  readonly #spec: LineHelperSpec
  readonly #replyTimeoutMs: number
  #child: Helper | undefined
  /** Exits of helper processes started and not yet gone. */
  readonly #exiting = new Set<Promise<void>>()
  #greeted = false
  #buffer = ''
  #pending: Array<(line: string | undefined) => void> = []
  #timer: NodeJS.Timeout | undefined
  #unavailable = false

  /** Nothing starts until the first {@link request}. */
  constructor(spec: LineHelperSpec) {
    this.#spec = spec
    this.#replyTimeoutMs = spec.replyTimeoutMs ?? REPLY_TIMEOUT_MS
  }

  /** Pid of the running helper, if one runs (diagnostics and tests). */
  get pid(): number | undefined {
    return this.#child?.pid
  }

  /** False once the program could not be started or did not greet, and after {@link dispose}. */
  get available(): boolean {
    return !this.#unavailable
  }

  /**
   * The helper's reply line to `line` (possibly empty), or `undefined` when none came: the helper is
   * unavailable, died, timed out or was disposed, or `line` holds a newline (it would be two requests).
   */
  request(line: string): Promise<string | undefined> {
    if (this.#unavailable || line.includes('\n')) return Promise.resolve(undefined)
    const child = this.#child ?? this.#start()
    if (!child) return Promise.resolve(undefined)
    return new Promise((resolve) => {
      this.#pending.push(resolve)
      if (this.#pending.length === 1) this.#busy(child)
      child.stdin.write(`${line}\n`)
    })
  }

  /**
   * Stop the helper for good; outstanding and later requests resolve `undefined`. Resolves once every
   * helper process this one killed has exited (at most {@link EXIT_WAIT_MS}), so an owner that awaits
   * it leaves no process behind.
   */
  dispose(): Promise<void> {
    this.#unavailable = true
    this.#stop()
    const exits = [...this.#exiting]
    if (exits.length === 0) return Promise.resolve()
    return settledWithin(Promise.all(exits), EXIT_WAIT_MS)
  }

  #start(): Helper | undefined {
    let child: Helper
    try {
      // Detached: a group of its own, to kill with anything stuck it started. Being a session leader
      // without a terminal is harmless as long as it opens no terminal as its controlling one.
      child = spawn(this.#spec.file, [...this.#spec.args], { stdio: ['pipe', 'pipe', 'ignore'], env: this.#spec.env, detached: true })
    } catch {
      this.#unavailable = true
      return undefined
    }
    this.#child = child
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()))
    this.#exiting.add(exited)
    void exited.then(() => this.#exiting.delete(exited))
    this.#greeted = this.#spec.greeting === undefined
    child.stdout.setEncoding('latin1')
    child.stdout.on('data', (text: string) => this.#receive(child, text))
    child.stdin.on('error', () => this.#stop(child))
    child.on('error', () => {
      // ENOENT and friends: nothing to run. Anything after a successful start is an exit.
      if (child.pid === undefined) this.#unavailable = true
      this.#stop(child)
    })
    child.on('exit', () => this.#stop(child))
    this.#idle(child)
    return child
  }

  #receive(child: Helper, text: string): void {
    if (child !== this.#child) return
    this.#buffer += text
    for (let end = this.#buffer.indexOf('\n'); end >= 0 && child === this.#child; end = this.#buffer.indexOf('\n')) {
      const line = this.#buffer.slice(0, end)
      this.#buffer = this.#buffer.slice(end + 1)
      if (!this.#greeted) {
        if (line !== this.#spec.greeting) {
          this.#stop(child)
          return
        }
        this.#greeted = true
      } else {
        this.#pending.shift()?.(line)
      }
      if (this.#pending.length === 0) this.#idle(child)
      else this.#armTimer(child)
    }
  }

  /** A request is outstanding: keep the host alive for the reply, and bound the wait. */
  #busy(child: Helper): void {
    child.ref()
    pipe(child.stdout).ref()
    this.#armTimer(child)
  }

  /** Nothing outstanding: the helper must not keep the host alive. */
  #idle(child: Helper): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    child.unref()
    pipe(child.stdout).unref()
    pipe(child.stdin).unref()
  }

  #armTimer(child: Helper): void {
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => this.#stop(child, true), this.#replyTimeoutMs)
  }

  /**
   * Forget `child` (the current helper by default), end it, and answer everything pending with
   * `undefined`. A helper that ends before its greeting other than by being `slow` (it exited, broke
   * its pipe, or said something else) is no helper at all: it is not started again.
   */
  #stop(child = this.#child, slow = false): void {
    if (!child || child !== this.#child) return
    if (!this.#greeted && !slow) this.#unavailable = true
    this.#child = undefined
    this.#buffer = ''
    clearTimeout(this.#timer)
    this.#timer = undefined
    child.stdin.destroy()
    child.stdout.destroy()
    // Not reaped yet, so its pid (and group id) cannot name anyone else: the whole group goes.
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid, 'SIGKILL')
      } catch {
        child.kill('SIGKILL')
      }
    }
    for (const resolve of this.#pending.splice(0)) resolve(undefined)
  }
}

/** Longest wait in {@link LineHelper.dispose} for killed helpers to exit. */
const EXIT_WAIT_MS = 2000

/** A child's stdio pipe is a `net.Socket`, which can stop keeping the event loop alive. */
function pipe(stream: Readable | Writable): Socket {
  return stream as Socket
}
