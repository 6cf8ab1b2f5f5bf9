import { type ChildProcessByStdio, spawn } from 'node:child_process'
import type { Socket } from 'node:net'
import type { Readable, Writable } from 'node:stream'

/** Longest wait for one reply before the helper is replaced: a stuck `stty` must not hold every later read. */
const REPLY_TIMEOUT_MS = 2000

/** How a helper is started (tests shorten the bound and point PATH at a fake stty). */
export interface SttyHelperOptions {
  /** PATH the helper finds `stty` on (default: the host's). */
  readonly path?: string | undefined
  /** Longest wait for one reply (default 2000 ms). */
  readonly replyTimeoutMs?: number
}

type Helper = ChildProcessByStdio<Writable, Readable, null>

/**
 * One long-lived `/bin/sh` that answers each device path written to it with one line of
 * `stty -g` for that device (empty when stty failed). Node has no `tcgetattr`, and spawning stty
 * from the host forks the whole host on the event loop's thread (milliseconds of stall); the
 * small shell forks instead. Started on first use in a process group of its own (no terminal);
 * it leaves when the host closes its stdin (also when the host dies); a helper that died or
 * stopped answering is killed with its group and replaced by the next read.
 */
export class SttyHelper {
  readonly #script: string
  readonly #env: NodeJS.ProcessEnv
  readonly #replyTimeoutMs: number
  #child: Helper | undefined
  #buffer = ''
  #pending: Array<(line: string | undefined) => void> = []
  #timer: NodeJS.Timeout | undefined
  #unavailable = false

  /** `deviceOption`: how this platform's stty names a device (`-F` GNU/busybox, `-f` BSD). */
  constructor(deviceOption: '-F' | '-f', options: SttyHelperOptions = {}) {
    this.#script = `while IFS= read -r d; do stty -g ${deviceOption} "$d" 2>/dev/null || echo; done`
    this.#env = { PATH: options.path ?? process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' }
    this.#replyTimeoutMs = options.replyTimeoutMs ?? REPLY_TIMEOUT_MS
  }

  /** Pid of the running helper, if one runs (diagnostics and tests). */
  get pid(): number | undefined {
    return this.#child?.pid
  }

  /** The `stty -g` line for `device`; `undefined` when it could not be read. Never rejects. */
  read(device: string): Promise<string | undefined> {
    if (this.#unavailable || device.includes('\n')) return Promise.resolve(undefined)
    const child = this.#child ?? this.#start()
    if (!child) return Promise.resolve(undefined)
    return new Promise((resolve) => {
      this.#pending.push(resolve)
      if (this.#pending.length === 1) this.#busy(child)
      child.stdin.write(`${device}\n`)
    })
  }

  /** Stop the helper; pending and later reads resolve `undefined`. */
  dispose(): void {
    this.#unavailable = true
    this.#stop()
  }

  #start(): Helper | undefined {
    let child: Helper
    try {
      // Detached: a group of its own to kill with a stuck stty. Being a session leader without a
      // terminal is harmless: only the helper's children open terminals, and they lead nothing.
      child = spawn('/bin/sh', ['-c', this.#script], { stdio: ['pipe', 'pipe', 'ignore'], env: this.#env, detached: true })
    } catch {
      this.#unavailable = true
      return undefined
    }
    this.#child = child
    child.stdout.setEncoding('latin1')
    child.stdout.on('data', (text: string) => this.#receive(child, text))
    child.stdin.on('error', () => this.#stop(child))
    child.on('error', () => {
      // ENOENT and friends: no shell to run. Anything after a successful start is an exit.
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
    for (let end = this.#buffer.indexOf('\n'); end >= 0; end = this.#buffer.indexOf('\n')) {
      const line = this.#buffer.slice(0, end)
      this.#buffer = this.#buffer.slice(end + 1)
      this.#pending.shift()?.(line || undefined)
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
    this.#timer = setTimeout(() => this.#stop(child), this.#replyTimeoutMs)
  }

  /** Forget `child` (the current helper by default), end it, and answer everything pending with `undefined`. */
  #stop(child = this.#child): void {
    if (!child || child !== this.#child) return
    this.#child = undefined
    this.#buffer = ''
    clearTimeout(this.#timer)
    this.#timer = undefined
    child.stdin.destroy()
    child.stdout.destroy()
    // Not reaped yet, so its pid (and group id) cannot name anyone else: the group goes, stty included.
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

/** A child's stdio pipe is a `net.Socket`, which can stop keeping the event loop alive. */
function pipe(stream: Readable | Writable): Socket {
  return stream as Socket
}
