import { PassThrough } from 'node:stream'
import { Buffer } from 'node:buffer'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Agent } from 'dsh-agent'
import type { Composition } from '../src/compose/load-config'
import type { HeadlessResponse } from '../src/headless/json-lines'
import { runJsonLines } from '../src/headless/runner'
import { load, SNAPSHOT_CONFIG } from './helpers'
import { CAPPED_TOOLS, MAX_RESULT_BYTES, SCRIPT } from './script'

let composition: Composition
let agent: Agent

beforeEach(async () => {
  composition = await load(SNAPSHOT_CONFIG)
  agent = await composition.agents.create()
})

afterEach(async () => {
  await agent.dispose()
  await composition.dispose()
})

/** Feed `lines` to the runner (then EOF) and collect every output line. */
async function run(lines: string[]): Promise<{ answered: number; output: string[] }> {
  const input = new PassThrough()
  const output = new PassThrough()
  const chunks: Buffer[] = []
  output.on('data', (chunk: Buffer) => chunks.push(chunk))
  input.end(lines.map((line) => `${line}\n`).join(''))
  const answered = await runJsonLines({ input, output, tools: composition.tools, agent })
  const text = Buffer.concat(chunks).toString('utf8')
  expect(text.endsWith('\n')).toBe(true)
  return { answered, output: text.slice(0, -1).split('\n') }
}

describe('headless JSON lines through the snapshot overlay', () => {
  it('pins the six terminal tool schemas', () => {
    const schemas = composition.tools.list().filter((tool) => tool.name.startsWith('terminal_'))
    expect(schemas.map((tool) => tool.name)).toEqual(['terminal_close', 'terminal_list', 'terminal_open', 'terminal_read', 'terminal_send', 'terminal_signal'])
    expect(schemas).toMatchSnapshot()
  })

  it('pins a scripted session: bounded results, a killed background job, a missing-session error', async () => {
    const lines = SCRIPT.map((request) => JSON.stringify(request))
    const { answered, output } = await run(lines)
    expect(answered).toBe(SCRIPT.length)
    const responses = output.map((line) => JSON.parse(line) as HeadlessResponse)
    expect(responses.map((response) => response.id)).toEqual(SCRIPT.map((request) => request.id))
    for (const [index, response] of responses.entries()) {
      if (CAPPED_TOOLS.test(SCRIPT[index]!.tool) && SCRIPT[index]!.tool !== 'terminal_teleport') {
        expect(Buffer.byteLength(response.text), response.text).toBeLessThanOrEqual(MAX_RESULT_BYTES)
      }
    }
    const missing = responses.find((response) => response.id === 10)!
    expect(missing).toEqual({ id: 10, isError: true, text: 'Error: unknown PTY session pty-1', meta: { errorCode: 'NO_SESSION' } })
    expect(responses).toMatchSnapshot()
  })

  it('answers malformed and blank lines without stopping, and ends at EOF', async () => {
    const { answered, output } = await run(['{"id": 1, "tool": "terminal_list"}', '', '   ', '{oops', '{"id": 2}', '{"id": 3, "tool": "terminal_list"}'])
    expect(answered).toBe(4)
    expect(output.map((line) => JSON.parse(line))).toEqual([
      { id: 1, isError: false, text: '(no terminal sessions)', meta: { sessions: [], truncated: false } },
      { id: null, isError: true, text: expect.stringMatching(/^Error: malformed request line: not valid JSON/), meta: { errorCode: 'MALFORMED_REQUEST' } },
      { id: 2, isError: true, text: expect.stringMatching(/"tool" must be a non-empty string/), meta: { errorCode: 'MALFORMED_REQUEST' } },
      { id: 3, isError: false, text: '(no terminal sessions)', meta: { sessions: [], truncated: false } },
    ])
  })

  it('runs requests in order, so a line can use the session the previous line opened', async () => {
    const { output } = await run([
      '{"id": "open", "tool": "terminal_open", "arguments": {"type": "snapshot"}}',
      '{"id": "send", "tool": "terminal_send", "arguments": {"sessionId": "pty-1", "text": "hi"}}',
    ])
    expect(output.map((line) => (JSON.parse(line) as HeadlessResponse).isError)).toEqual([false, false])
    expect((JSON.parse(output[1]!) as HeadlessResponse).text).toContain('ok: hi')
  })

  it('stops reading and cancels the call in flight when its signal aborts', async () => {
    const input = new PassThrough()
    const output = new PassThrough()
    const stop = new AbortController()
    const lines: string[] = []
    output.on('data', (chunk: Buffer) => {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean))
      // The session is open: the next line's `sleep` holds until the abort cancels it.
      if (lines.length === 1) {
        input.write('{"id": 2, "tool": "terminal_send", "arguments": {"sessionId": "pty-1", "text": "sleep"}}\n')
        queueMicrotask(() => stop.abort())
      }
    })
    input.write('{"id": 1, "tool": "terminal_open", "arguments": {"type": "snapshot"}}\n')
    const answered = await runJsonLines({ input, output, tools: composition.tools, agent, signal: stop.signal })
    expect(answered).toBe(2)
    expect(JSON.parse(lines[1]!)).toMatchObject({ id: 2, isError: true, meta: { errorCode: 'CANCELLED' } })
  })
})
