// Where one `true` send's microseconds go. In place: this process's CPU per `true` send through the
// raw floor, `ctx.terminals` and `ctx.tools` (terminal_send), taking turns block by block. Apart: each
// layer a send passes through, run alone in a loop, per call: the tool's validation and pipeline,
// result shaping, the registry, the backend without a PTY, the input-state look, the earlier-output
// buffer and the line pipeline. Every row's floor is the raw floor's CPU per send, so a layer's ratio
// is its share of what the whole raw round trip costs this process.
import { Context } from '@deepseek-ai/cordis'
import * as agentPlugin from '../../packages/agent/src/index'
import { parseConfig, ShellSession } from '../../packages/terminal/terminal-bash/src/internal'
import { PromptTracker, ScrollbackRing, SendOutputBuffer, TerminalSanitizer } from '../../packages/terminal/terminal-bash/src/output/index'
import type { TerminalBackendSession, TerminalSendResult } from '../../packages/terminal/terminal/src/index'
import * as terminalPlugin from '../../packages/terminal/terminal/src/index'
import { fitResult, inputMeta, sendLayout } from '../../packages/terminal/tool-terminal/src/internal'
import { defineTool, type ToolOutput } from '../../packages/tools/src/index'
import { parseArguments, runTool } from '../../packages/tools/src/run'
import { REPLAY_NONCE, ReplayHandle } from '../lib/replay-handle'
import { collectRotating, cpuMicros, STEADY_WARMUP_SENDS } from '../lib/measure'
import { RawShell } from '../lib/raw-shell'
import { wants } from '../lib/row-filter'
import { exact, mount, TOOLS_CONFIG } from '../lib/shell-stack'
import type { BenchRow } from '../lib/types'

const FLOOR = 'raw: CPU per `true` send'
const TERMINALS = 'ctx.terminals: CPU per `true` send'
const TOOLS = 'ctx.tools terminal_send: CPU per `true` send'
const WALL_FLOOR = 'raw: `true` round trip'
const WALL_TOOLS = 'ctx.tools terminal_send: `true` round trip'
/** Sends per in-place sample (process.cpuUsage counts whole microseconds). */
const SENDS_PER_SAMPLE = 50
/** Calls per sample of a layer run alone, and samples per layer. */
const CALLS = 2000
const SAMPLES = 15

/** The result a `true` send at the idle prompt settles with. */
const TRUE_RESULT: TerminalSendResult = {
  viewport: 'true\ndsh> ',
  waitReason: 'stdin_read',
  sessionStatus: { kind: 'running' },
  truncated: false,
  firstLine: 1,
  input: { kind: 'prompt' },
  exitCode: 0,
}

/** CPU µs per call of `run` over {@link CALLS} calls, {@link SAMPLES} samples after one unmeasured. */
async function perCall(run: () => unknown): Promise<number[]> {
  const sample = async () =>
    (await cpuMicros(async () => {
      for (let i = 0; i < CALLS; i++) await run()
    })) / CALLS
  await sample()
  const samples: number[] = []
  for (let i = 0; i < SAMPLES; i++) samples.push(await sample())
  return samples
}

/** The in-place rows: CPU per send and the tool call's round trip, floor and stack taking turns. */
async function inPlace(): Promise<BenchRow[]> {
  const stack = await mount()
  const raw = await RawShell.open()
  const id = await stack.open()
  try {
    // Each sample: SENDS_PER_SAMPLE sends, CPU and wall time per send.
    const block = (send: () => Promise<unknown>) => async () => {
      const start = performance.now()
      const cpu = await cpuMicros(async () => {
        for (let i = 0; i < SENDS_PER_SAMPLE; i++) await send()
      })
      walls.get(send)!.push(((performance.now() - start) * 1000) / SENDS_PER_SAMPLE)
      return cpu / SENDS_PER_SAMPLE
    }
    const rawSend = () => raw.run('true')
    const terminalsSend = async () => exact(await stack.run(id, 'true'), 'dsh> ', '`true`', 'prompt')
    const toolSend = async () => {
      const result = await stack.call('terminal_send', { sessionId: id, text: 'true' })
      if (result.meta?.waitReason !== 'stdin_read') throw new Error(`bench: terminal_send \`true\`: ${JSON.stringify(result)}`)
    }
    const walls = new Map<() => Promise<unknown>, number[]>([
      [rawSend, []],
      [terminalsSend, []],
      [toolSend, []],
    ])
    // Steady state, as the shell suite's per-send rows (STEADY_WARMUP_SENDS each first).
    const warmup = Math.ceil(STEADY_WARMUP_SENDS / SENDS_PER_SAMPLE)
    const [floor, terminals, tools] = await collectRotating(30, [block(rawSend), block(terminalsSend), block(toolSend)], warmup)
    const measured = (send: () => Promise<unknown>) => walls.get(send)!.slice(-30)
    return [
      { figure: FLOOR, unit: 'µs', samples: floor! },
      {
        figure: TERMINALS,
        unit: 'µs',
        floor: FLOOR,
        note: `steady state; process.cpuUsage over ${SENDS_PER_SAMPLE} sends per sample; the three take turns block by block`,
        samples: terminals!,
      },
      { figure: TOOLS, unit: 'µs', floor: FLOOR, note: "what a model's call costs: the tools pipeline around ctx.terminals", samples: tools! },
      { figure: WALL_FLOOR, unit: 'µs', samples: measured(rawSend) },
      { figure: WALL_TOOLS, unit: 'µs', floor: WALL_FLOOR, note: `mean per send over each block of ${SENDS_PER_SAMPLE}`, samples: measured(toolSend) },
    ]
  } finally {
    await raw.close()
    await stack.close(id)
    await stack.dispose()
  }
}

/** One layer row: µs of CPU per call of the layer alone, against the raw floor's CPU per send. */
function layer(figure: string, note: string, samples: number[]): BenchRow {
  return { figure, unit: 'µs', floor: FLOOR, note, samples }
}

/** The tools package and the send tool: validation, the pipeline around execute, result shaping. */
async function toolLayers(): Promise<BenchRow[]> {
  const stack = await mount()
  try {
    const tool = stack.root.tools.get('terminal_send')
    if (!tool) throw new Error('bench: terminal_send is not registered')
    const args = { sessionId: 'pty-1', text: 'true' }
    const back = { sessionId: 'pty-1', windowBytes: TOOLS_CONFIG.defaultMaxBytes, maxResultBytes: TOOLS_CONFIG.maxResultBytes }
    // What the send tool does with a settled result: its meta, then the layout fitted to the window.
    const shape = (result: TerminalSendResult): ToolOutput => {
      const meta: Record<string, unknown> = { sessionId: 'pty-1', background: false, waitReason: result.waitReason, sessionStatus: { ...result.sessionStatus } }
      if (typeof result.exitCode === 'number') meta.exitCode = result.exitCode
      if (result.input) meta.input = inputMeta(result.input)
      const fitted = fitResult(sendLayout(result, back), TOOLS_CONFIG.defaultMaxBytes, { foldRepeats: true })
      return { content: [{ type: 'text', text: fitted.text }], meta: { ...meta, truncated: fitted.truncated } }
    }
    const settled = shape(TRUE_RESULT)
    const stub = defineTool({ ...tool, execute: () => settled })
    const agent = await stack.root.agents.create()
    let calls = 0
    return [
      layer(
        'layer: tool validation (terminal_send arguments through zod)',
        'parseArguments of {sessionId, text: "true"}',
        await perCall(() => parseArguments(tool, args)),
      ),
      layer(
        'layer: tool pipeline around execute (validation, presentation, finalize)',
        'runTool of terminal_send whose execute returns a shaped `true` result at once',
        await perCall(() => runTool(stub, { callId: `layer-${++calls}`, name: 'terminal_send', arguments: args, agent })),
      ),
      layer('layer: result shaping (sendLayout, fitResult, meta)', 'the `true` result fitted to the 16 KiB window', await perCall(() => shape(TRUE_RESULT))),
    ]
  } finally {
    await stack.dispose()
  }
}

/** The registry: `ctx.terminals.startSend` to `done`, over a backend whose sends settle at once. */
async function registryLayer(): Promise<BenchRow[]> {
  const root = new Context()
  const fibers = [await root.plugin(agentPlugin), await root.plugin(terminalPlugin, {})]
  const session: TerminalBackendSession = {
    motd: '',
    startSend: () => ({
      done: Promise.resolve(TRUE_RESULT),
      released: Promise.resolve(),
      readOutput: () => ({ delta: '', truncated: false }),
      cancel: () => false,
    }),
    read: () => ({ text: '', totalLines: 0, lineBegin: 1, lineEnd: 1, oldestLine: 1, truncated: false }),
    signal: async () => ({ delivered: true, targetPgid: 1 }),
    status: () => ({ kind: 'running' }),
    close: async () => {},
  }
  root.terminals.registerBackend({ type: 'bench-stub', spawn: async () => session })
  const agent = await root.agents.create()
  const terminals = root.terminals
  const { sessionId } = await terminals.spawn(agent, { type: 'bench-stub' })
  try {
    const samples = await perCall(async () => {
      const send = terminals.startSend(agent, sessionId, { text: 'true', submit: true })
      await send.done
      await send.released
    })
    return [
      layer(
        'layer: registry (startSend to done, a backend that settles at once)',
        'owner and id guards, request checks, the session record and the Cordis service proxy',
        samples,
      ),
    ]
  } finally {
    await agent.dispose()
    for (const fiber of fibers.reverse()) await fiber.dispose()
  }
}

/** The backend without a PTY (a ShellSession over a recording of bash), its input look, the buffer and the line pipeline. */
async function backendLayers(): Promise<BenchRow[]> {
  const config = parseConfig({})
  const session = new ShellSession(new ReplayHandle(), config, { nonce: REPLAY_NONCE })
  await session.startup(new AbortController().signal)
  const send = async () => {
    const result = await session.startSend({ text: 'true', submit: true }).done
    if (result.waitReason !== 'stdin_read' || result.input?.kind !== 'prompt')
      throw new Error(`bench: the replayed \`true\` did not settle: ${JSON.stringify(result)}`)
  }
  const sanitizer = new TerminalSanitizer({ rows: config.rows, cols: config.cols })
  const scrollback = new ScrollbackRing({ maxLines: config.scrollbackLines, maxBytes: config.scrollbackMaxBytes })
  const prompt = new PromptTracker('dsh> ', '> ')
  const reply = Buffer.from(`true\r\n\x1b[?2004l\r\x1b]133;D;${REPLAY_NONCE}000\x07\x1b[?2004hdsh> `, 'latin1')
  try {
    const rows = [
      layer(
        'layer: backend send without a PTY (send machine, output pipeline, screen, buffers)',
        'ShellSession.startSend to done over a handle that replays what bash sends for `true` one event-loop turn after the write; no registry',
        await perCall(send),
      ),
      layer(
        'layer: input-state look at the prompt (ShellSession.inputState)',
        'known idle where the send ended: read from the marker',
        await perCall(() => session.inputState()),
      ),
      layer(
        'layer: earlier-output buffer (one created and settled empty)',
        'each settled send makes one for output between sends; the next send settles it',
        await perCall(() => new SendOutputBuffer(sanitizer.line, config.maxReadBytes).settle()),
      ),
      layer(
        'layer: line pipeline of the `true` reply (sanitizer, scrollback, prompt tracker)',
        'the bytes bash sends for `true`, through the line view only (no emulator, no send)',
        await perCall(() => {
          const chunk = sanitizer.write(reply)
          scrollback.append(chunk)
          prompt.update(chunk)
        }),
      ),
    ]
    return rows
  } finally {
    await session.close('bench')
  }
}

/** Every layer of a `true` send, and the whole send in place, against the raw floor's CPU per send. */
export async function layers(): Promise<BenchRow[]> {
  const rows = await inPlace()
  if (wants('layer: tool')) rows.push(...(await toolLayers()))
  if (wants('layer: registry')) rows.push(...(await registryLayer()))
  if (wants('layer: backend', 'layer: input', 'layer: earlier', 'layer: line')) rows.push(...(await backendLayers()))
  return rows
}
