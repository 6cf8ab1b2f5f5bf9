import { execFileSync } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context, type Fiber } from '@deepseek-ai/cordis'
import * as agentPlugin from 'dsh-agent'
import type { Agent } from 'dsh-agent'
import * as policyPlugin from 'dsh-sandbox-policy'
import * as localPlugin from 'dsh-subprocess-local'
import * as terminalPlugin from 'dsh-terminal'
import type { TerminalSendResult, TerminalSessionId, TerminalSessionService, TerminalTextSend } from 'dsh-terminal'
import * as bashPlugin from 'dsh-terminal-bash'
import * as recorderPlugin from '../src/index'
import type { RecorderService } from '../src/index'

/** Options of the recorder under test; `dir` defaults to a fresh temporary directory. */
export type RecorderOptions = { dir?: string; maxBytesPerSession?: number; retentionDays?: number }

/** A real stack (node-pty, bash, the registry) with the recorder mounted, and one agent. */
export interface RecorderStack {
  readonly root: Context
  readonly agent: Agent
  readonly terminals: TerminalSessionService
  readonly recorder: RecorderService
  /** Raw output of every session, as a second observer of the registry saw it. */
  readonly raw: Map<string, Buffer[]>
  open(name?: string): Promise<TerminalSessionId>
  run(id: TerminalSessionId, text: string, extra?: Partial<TerminalTextSend>): Promise<TerminalSendResult>
  /** Unload the recorder plugin (sessions keep running). */
  unloadRecorder(): Promise<void>
  /** Close the session and wait until its recording file is complete. */
  close(id: TerminalSessionId): Promise<void>
  dispose(): Promise<void>
}

/** A temporary directory removed by the returned function. */
export async function scratchDir(prefix: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) }
}

/** Mount agents, the local provider, an unconfined policy, the registry, bash and the recorder. */
export async function startRecorderStack(options: RecorderOptions & { dir: string }): Promise<RecorderStack> {
  const root = new Context()
  const fibers: Fiber[] = []
  fibers.push(await root.plugin(agentPlugin))
  fibers.push(await root.plugin(localPlugin))
  fibers.push(await root.plugin(policyPlugin, { mode: 'danger-full-access' }))
  fibers.push(await root.plugin(terminalPlugin, { humanActiveMs: 0 }))
  fibers.push(await root.plugin(bashPlugin, { idleSilenceMs: 10_000, timeoutMs: 20_000, rows: 24, cols: 100 }))
  const raw = new Map<string, Buffer[]>()
  root.terminals.observeSessions({
    sessionStarting: (start) => {
      const chunks: Buffer[] = []
      raw.set(start.sessionId, chunks)
      return { output: (bytes) => chunks.push(Buffer.from(bytes)) }
    },
  })
  const recorderFiber = await root.plugin(recorderPlugin, options)
  fibers.push(recorderFiber)
  const recorder = root.get('recorder') as RecorderService
  if (!recorder) throw new Error('ctx.recorder did not come up')
  const agent = await root.agents.create()
  const terminals = root.terminals
  let calls = 0
  return {
    root,
    agent,
    terminals,
    recorder,
    raw,
    async open(name) {
      return (await terminals.spawn(agent, name === undefined ? { type: 'shell' } : { type: 'shell', name })).sessionId
    },
    unloadRecorder: async () => {
      await recorderFiber.dispose()
    },
    run: (id, text, extra = {}) => terminals.startSend(agent, id, { text, submit: true, callId: `test-${++calls}`, ...extra }).done,
    async close(id) {
      await terminals.close(agent, id)
      // The file is complete once the recorder let go of it.
      await recorder.settled()
    },
    async dispose() {
      await agent.dispose()
      for (const fiber of fibers.reverse()) await fiber.dispose()
    },
  }
}

/** The one recording in `dir` (its path and text). */
export async function onlyRecording(recorder: RecorderService): Promise<{ path: string; text: string; name: string }> {
  const names = await recorder.list()
  if (names.length !== 1) throw new Error(`expected one recording, found ${names.length}: ${names.join(', ')}`)
  const name = names[0]!
  return { name, path: join(recorder.directory, name), text: await readFile(join(recorder.directory, name), 'utf8') }
}

/**
 * What `asciinema cat FILE` prints, byte for byte. It insists on a terminal (/dev/tty), so it runs
 * under `script`, with its standard output going to a file (untouched by the PTY).
 */
export async function asciinemaCat(path: string, outDir: string): Promise<Buffer> {
  const out = join(outDir, 'cat.out')
  execFileSync('script', ['-qec', `asciinema cat ${shellQuote(path)} > ${shellQuote(out)}`, '/dev/null'], {
    env: { ...process.env, PYTHONIOENCODING: 'utf-8', LANG: 'C.UTF-8' },
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 20_000,
  })
  return readFile(out)
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`
}
