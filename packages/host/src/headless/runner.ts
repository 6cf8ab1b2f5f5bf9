import { createInterface } from 'node:readline'
import type { Readable } from 'node:stream'
import type { Agent } from 'dsh-agent'
import type { ToolService } from 'dsh-tools'
import { formatResponse, parseRequestLine, responseFor } from './json-lines'

/** What {@link runJsonLines} drives. */
export interface JsonLinesOptions {
  /** Request lines. */
  input: Readable
  /** Where each response line is written. */
  output: NodeJS.WritableStream
  /** The composition's tool registry. */
  tools: ToolService
  /** The agent every call runs as. */
  agent: Agent
  /** Aborts the call in flight and stops reading (e.g. on SIGINT). */
  signal?: AbortSignal
}

/**
 * Answer each non-blank input line with exactly one output line, in order: requests run one after
 * another, so a script can open a session and use its id on the next line. Malformed lines get an
 * error line. Resolves when the input ended (or `signal` aborted) and the last response is written.
 */
export async function runJsonLines(options: JsonLinesOptions): Promise<number> {
  const { input, output, tools, agent, signal } = options
  const lines = createInterface({ input, crlfDelay: Infinity, terminal: false })
  const stop = () => lines.close()
  signal?.addEventListener('abort', stop, { once: true })
  let answered = 0
  try {
    for await (const line of lines) {
      if (!line.trim()) continue
      const parsed = parseRequestLine(line)
      if (!parsed.ok) {
        output.write(formatResponse(parsed.response))
      } else {
        const { id, tool } = parsed.request
        const result = await tools.execute({
          callId: `headless-${answered + 1}`,
          name: tool,
          arguments: parsed.request.arguments,
          agent,
          ...(signal ? { signal } : {}),
        })
        output.write(formatResponse(responseFor(id, result)))
      }
      answered++
      if (signal?.aborted) break
    }
  } finally {
    signal?.removeEventListener('abort', stop)
    lines.close()
  }
  return answered
}
