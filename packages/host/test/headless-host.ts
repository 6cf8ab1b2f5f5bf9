import { CLI_ARGS, REPO_ROOT, TSX } from './helpers'
import type { PrivateRuntime } from './private-runtime'
import { type Finished, type Running, start } from './process'

/** One tool call's answer on a headless host's stdout. */
export interface ToolAnswer {
  text: string
  isError: boolean
}

/** How a host starts: its command-line arguments after `headless`, and its environment. */
export interface HeadlessHostOptions {
  /** Variables added to the test's environment. */
  readonly env?: Record<string, string>
  /** Variables removed from it first (e.g. XDG_RUNTIME_DIR, to show a host does not depend on it). */
  readonly unset?: readonly string[]
}

/**
 * A real `dsh-terminal headless` host (from sources, through tsx) driven as a model drives it: one
 * JSON line per tool call. It runs inside a private `/tmp/dsh-terminal` (see PrivateRuntime), so its
 * attach socket meets no other host on the machine.
 */
export class HeadlessHost {
  #calls = 0

  protected constructor(protected readonly running: Running) {}

  /** Start a host inside `runtime` with `args` after `headless`. */
  static start(runtime: PrivateRuntime, args: readonly string[], options: HeadlessHostOptions = {}): HeadlessHost {
    return new HeadlessHost(HeadlessHost.run(runtime, args, options))
  }

  /** The host process itself, for subclasses' own `start`. */
  protected static run(runtime: PrivateRuntime, args: readonly string[], options: HeadlessHostOptions): Running {
    const unset = (options.unset ?? []).flatMap((name) => ['-u', name])
    const argv = [...(unset.length > 0 ? ['env', ...unset] : []), TSX, ...CLI_ARGS, 'headless', ...args]
    const [program, ...rest] = runtime.wrap(argv, REPO_ROOT)
    return start(program!, rest, REPO_ROOT, options.env)
  }

  /** Call a tool; resolves with its answer, errors included. */
  async answer(tool: string, args: Record<string, unknown>): Promise<ToolAnswer> {
    const id = ++this.#calls
    this.running.child.stdin.write(`${JSON.stringify({ id, tool, arguments: args })}\n`)
    const answer = () =>
      this.running
        .stdout()
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as ToolAnswer & { id: number })
        .find((candidate) => candidate.id === id)
    await this.running.waitForStdout(() => answer() !== undefined)
    return answer()!
  }

  /** Call a tool; resolves with its text, or rejects with the error text and the host's log. */
  async call(tool: string, args: Record<string, unknown>): Promise<string> {
    const answer = await this.answer(tool, args)
    if (answer.isError) throw new Error(`${tool} failed: ${answer.text}\n${this.running.stderr()}`)
    return answer.text
  }

  /** End the host (EOF ends a headless run) and wait for it. */
  async close(): Promise<Finished> {
    this.running.child.stdin.end()
    return await this.running.finished
  }
}
