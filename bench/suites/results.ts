// Results sized for a model: how many bytes a model receives for a flood of output through the
// default composition (the window it ships, head and tail with the way back), next to the output's
// own size; and what shaping costs in CPU next to the plain tail cut it replaced.
import type { Agent } from 'dsh-agent'
import { loadComposition } from '../../packages/host/src/index'
import { fitResult } from '../../packages/terminal/tool-terminal/src/internal'
import { keepUtf8Tail, utf8ByteLength } from '../../packages/basics/src/index'
import { collect, collectInterleaved } from '../lib/measure'
import type { BenchRow } from '../lib/types'

const CONFIG = new URL('../../cordis.yml', import.meta.url).pathname
const SEQ = 'seq 1 300000'
const SEQ_BYTES = 1_988_895 // "1\n" … "300000\n"
const FLOOD = 'head -c 20000000 /dev/urandom | base64'
const FLOOD_BYTES = 27_017_547
const KiB = 1024

/** Open → send → close through ctx.tools on the default composition; the result's text and meta. */
export async function results(): Promise<BenchRow[]> {
  const composition = await loadComposition({ configPath: CONFIG, log: () => {} })
  const agent: Agent = await composition.agents.create()
  let next = 0
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await composition.tools.execute({ callId: `results-${next++}`, name, arguments: args, agent })
    const text = result.content.map((block) => block.text).join('\n')
    if (result.isError) throw new Error(`${name} failed: ${text}`)
    return { text, meta: (result.meta ?? {}) as Record<string, unknown> }
  }
  const rows: BenchRow[] = []
  try {
    const sessionId = (await call('terminal_open', { type: 'shell' })).meta.sessionId as string
    const send = (text: string) => call('terminal_send', { sessionId, text, timeoutMs: 120_000 })

    // Two rows per command: the output's own size (the floor) and the result a model receives,
    // checked every sample by `check` (which throws when the result lost its shape).
    const sized = async (command: string, outputBytes: number, name: string, check: (text: string) => void, note: string) => {
      const samples = await collect(
        3,
        async () => {
          const { text } = await send(command)
          check(text)
          return utf8ByteLength(text) / KiB
        },
        1,
      )
      rows.push({ figure: `output: ${name}`, unit: 'KiB', samples: [outputBytes / KiB] })
      rows.push({ figure: `result: ${name}, default composition`, unit: 'KiB', floor: `output: ${name}`, note, samples })
    }
    await sized(
      SEQ,
      SEQ_BYTES,
      '`seq 1 300000`',
      (text) => {
        const body = text.slice(0, text.indexOf('\n[wait: stdin_read]'))
        // The tail must be intact: the last numbers and the prompt; the head begins with the command.
        if (!body.endsWith('299999\n300000\ndsh> ') || !body.startsWith(`${SEQ}\n1\n2\n`) || !/\n\[… \d+ lines .* terminal_read \{/.test(body)) {
          throw new Error(`bench: ${SEQ} result is not head + way back + tail:\n${text.slice(0, 300)}\n…\n${text.slice(-300)}`)
        }
      },
      'head (the command and 1, 2, …), one line naming the terminal_read call for the middle, tail (…, 300000, the prompt) and the status lines; checked every sample',
    )
    await sized(
      FLOOD,
      FLOOD_BYTES,
      '27 MB flood',
      (text) => {
        if (!text.includes('\ndsh> \n[wait: stdin_read]')) throw new Error(`bench: flood did not settle at the prompt:\n${text.slice(-300)}`)
      },
      'base64 lines end with the prompt; the middle is named by line numbers (most of it already left the scrollback)',
    )
  } finally {
    await agent.dispose()
    await composition.dispose()
  }

  // What shaping costs: a 256 KiB viewport of distinct lines (nothing folds) cut to the 16 KiB window.
  const viewport = Array.from({ length: 40_000 }, (_, index) => `${index} ${'x'.repeat(index % 7)}`)
    .join('\n')
    .slice(0, 256 * KiB)
  const layout = {
    body: viewport,
    trailer: [{ text: '[wait: stdin_read]' }, { text: '[session: running]' }],
    bodyFirstLine: 1,
    readCall: () => 'terminal_read {}',
  }
  const cpu = await collectInterleaved(
    200,
    async () => {
      const start = performance.now()
      keepUtf8Tail(viewport, 16 * KiB)
      return (performance.now() - start) * 1000
    },
    async () => {
      const start = performance.now()
      fitResult(layout, 16 * KiB, { foldRepeats: true })
      return (performance.now() - start) * 1000
    },
    20,
  )
  rows.push({ figure: 'raw: tail cut of a 256 KiB viewport to 16 KiB', unit: 'µs', samples: cpu.floor })
  rows.push({
    figure: 'shaped: fold + head/tail of the same viewport (fitResult)',
    unit: 'µs',
    floor: 'raw: tail cut of a 256 KiB viewport to 16 KiB',
    note: 'per result, in the tool layer after the send settled: the backend drains the PTY exactly as before (see the shell suite flood row)',
    samples: cpu.contender,
  })
  return rows
}
