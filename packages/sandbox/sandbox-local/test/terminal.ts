import { foregroundGroup } from 'dsh-testkit'
import { type IPty, spawn } from 'node-pty'
import { DEADLINE_MS } from './helpers'

/** Marker printed before every prompt, carrying the last exit status. */
const MARKER = /\[\[rc=(\d+)\]\]/g

/**
 * An interactive bash on a real PTY whose prompt is a marker with the last exit status, so a test
 * waits for exactly "the command finished" instead of for time to pass.
 */
export class Terminal {
  readonly pty: IPty
  private output = ''
  private exited: Promise<{ exitCode: number; signal?: number }>
  private notify: () => void = () => {}

  constructor(argv: string[], cwd: string) {
    const [file = '', ...args] = argv
    this.pty = spawn(file, args, {
      name: 'dumb',
      cols: 100,
      rows: 30,
      cwd,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/',
        TERM: 'dumb',
        PS1: '',
        PROMPT_COMMAND: 'printf "[[rc=%s]]\\n" "$?"',
      },
    })
    this.pty.onData((data) => {
      this.output += data
      this.notify()
    })
    this.exited = new Promise((resolve) => this.pty.onExit(resolve))
  }

  /** Wait for the first prompt. */
  async ready(): Promise<void> {
    await this.waitForMarkers(1)
  }

  /** Type a command line and wait for the next prompt; returns what it printed and its status. */
  async run(command: string): Promise<{ text: string; status: number }> {
    const before = this.markers().length
    const start = this.output.length
    this.pty.write(`${command}\r`)
    await this.waitForMarkers(before + 1)
    const marker = this.markers()[before] as RegExpMatchArray
    return { text: this.output.slice(start, marker.index), status: Number(marker[1]) }
  }

  /** Type a command line without waiting (e.g. one that takes the foreground). */
  type(command: string): void {
    this.pty.write(`${command}\r`)
  }

  /** Wait for the prompt that follows a command started with {@link type}. */
  async nextStatus(after: number): Promise<number> {
    await this.waitForMarkers(after + 1)
    return Number((this.markers()[after] as RegExpMatchArray)[1])
  }

  /** How many prompts have been printed so far. */
  promptCount(): number {
    return this.markers().length
  }

  /** The terminal's foreground process group, read from the host's /proc of the spawned pid. */
  foregroundGroup(): number | undefined {
    return foregroundGroup(this.pty.pid)
  }

  /** Resolves with the exit of the spawned process (bwrap). */
  exit(): Promise<{ exitCode: number; signal?: number }> {
    return this.exited
  }

  private markers(): RegExpMatchArray[] {
    return [...this.output.matchAll(MARKER)]
  }

  private waitForMarkers(count: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no prompt #${count}; output so far:\n${this.output}`)), DEADLINE_MS)
      const check = () => {
        if (this.markers().length >= count) {
          clearTimeout(timer)
          this.notify = () => {}
          resolve()
        }
      }
      this.notify = check
      void this.exited.then(() => {
        clearTimeout(timer)
        if (this.markers().length < count) reject(new Error(`the shell exited before prompt #${count}:\n${this.output}`))
      })
      check()
    })
  }
}
