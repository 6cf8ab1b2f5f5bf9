import { execFileSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { Context } from '@deepseek-ai/cordis'
import type { SubprocessRuntime, SubprocessTerminalHandle, TerminalSpawnSpec } from 'dsh-subprocess'
import * as local from 'dsh-subprocess-local'
import { LocalSubprocessRuntime, type LocalSubprocessRuntimeOptions } from '../src/internal'
import { eventually } from 'dsh-testkit'

/**
 * A Context with the local provider mounted, plus bookkeeping that terminates every handle.
 * `options` builds the runtime directly (injected cgroup layouts) instead of through the plugin.
 */
export async function mountRuntime(config: Record<string, unknown> = {}, options?: LocalSubprocessRuntimeOptions) {
  const root = new Context()
  const direct = {
    name: 'dsh-subprocess-local-with-options',
    apply: (ctx: Context) => void new LocalSubprocessRuntime(ctx, local.Config.parse(config), options),
  }
  const fiber = options ? await root.plugin(direct) : await root.plugin(local, config)
  const handles: SubprocessTerminalHandle[] = []
  const runtime: SubprocessRuntime = root.subprocess
  return {
    root,
    runtime,
    async spawn(spec: Partial<TerminalSpawnSpec> & Pick<TerminalSpawnSpec, 'argv'>) {
      const handle = await runtime.spawnTerminal({ cwd: tmpdir(), rows: 24, cols: 120, graceMs: 2000, ...spec })
      handles.push(handle)
      return handle
    },
    async close() {
      await Promise.allSettled(handles.map((handle) => handle.terminate()))
      await fiber.dispose()
    },
  }
}

/** An interactive bash with a plain prompt and no rc files. */
export const BASH = ['bash', '--noprofile', '--norc', '-i']
export const BASH_ENV = { PS1: 'PROMPT$ ', TERM: 'dumb', HISTFILE: '/dev/null', PROMPT_COMMAND: undefined }

/** Accumulates a handle's output as text and waits for patterns in it. */
export function capture(handle: SubprocessTerminalHandle) {
  const chunks: Buffer[] = []
  handle.onOutput((chunk) => chunks.push(chunk))
  const text = () => Buffer.concat(chunks).toString('utf8')
  return {
    text,
    /** Everything after the last occurrence of `marker` (for reading one command's output). */
    since(offset: number) {
      return text().slice(offset)
    },
    length: () => text().length,
    async waitFor(pattern: RegExp, from = 0, timeoutMs = 10_000): Promise<RegExpExecArray> {
      return eventually(() => pattern.exec(text().slice(from)) ?? undefined, `output matching ${pattern}`, timeoutMs)
    },
  }
}

/** Read `NAME=<pid>` lines a test command printed. */
export async function pidFrom(out: ReturnType<typeof capture>, name: string, from = 0): Promise<number> {
  const match = await out.waitFor(new RegExp(`${name}=(\\d+)`), from)
  return Number(match[1])
}

/**
 * Type `command` into `shell` and read the `NAME=<pid>` lines it prints for `names`, from this
 * command's output on; the pids are also added to `strays` (killed after a failing test).
 */
export async function runForPids(
  shell: { handle: SubprocessTerminalHandle; out: ReturnType<typeof capture> },
  command: string,
  names: readonly string[],
  strays: number[],
): Promise<number[]> {
  const from = shell.out.length()
  await shell.handle.write(`${command}\r`)
  const pids: number[] = []
  for (const name of names) pids.push(await pidFrom(shell.out, name, from))
  strays.push(...pids)
  return pids
}

/** The real python3 binary (version managers put slow shell shims on PATH). */
export const PYTHON = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim()
