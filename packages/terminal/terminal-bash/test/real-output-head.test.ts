import type { TerminalSendResult, TerminalSessionId } from 'dsh-terminal'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../src/internal'
import { PATIENT, startStack, type Stack } from './support/stack'

// A send whose output overflows the result's byte bound keeps its beginning apart: the real
// provider, registry and bash with the default bounds (256 KiB per result, a scrollback of 10000
// lines that loses the beginning too).

const { maxReadBytes: MAX_READ_BYTES, scrollbackLines } = parseConfig(PATIENT)
const COUNT = 300_000
const COMMAND = `seq 1 ${COUNT}`

/** The head the bound allows of `seq`'s output: the echo, then the numbers, whole, within a quarter of the bytes. */
function expectedHead(): string[] {
  const lines = [COMMAND]
  let bytes = COMMAND.length
  for (let number = 1; bytes + 1 + String(number).length <= Math.floor(MAX_READ_BYTES / 4); number++) {
    lines.push(String(number))
    bytes += 1 + String(number).length
  }
  return lines
}

describe('the head of a send that overflowed its bound', () => {
  let stack: Stack
  let id: TerminalSessionId

  beforeAll(async () => {
    expect(COUNT).toBeGreaterThan(scrollbackLines)
    stack = await startStack(PATIENT)
    id = (await stack.open()).sessionId
    await stack.run(id, 'echo before')
  })

  afterAll(async () => {
    await stack.dispose()
  })

  it('starts at the echo, and with the gap and the viewport accounts for every line and byte', async () => {
    // The prompt the command is typed on is the newest line now: its echo will be that line.
    const echoLine = stack.terminals.read(stack.agent, id, { count: 1 }).lineEnd
    const result: TerminalSendResult = await stack.run(id, COMMAND)
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, truncated: true })
    const head = result.outputHead as NonNullable<TerminalSendResult['outputHead']>
    const headLines = head.text.split('\n')
    expect(headLines.slice(0, 3)).toEqual([COMMAND, '1', '2'])
    expect(headLines).toEqual(expectedHead())
    expect(head.firstLine).toBe(echoLine)
    // The echo, every number and the prompt the send ended on, each in exactly one place.
    const viewport = result.viewport.split('\n')
    expect(viewport.slice(-2)).toEqual([String(COUNT), 'dsh> '])
    expect(headLines.length + head.gapLines + viewport.length).toBe(1 + COUNT + 1)
    expect(result.firstLine).toBe(echoLine + headLines.length + head.gapLines)
    const numbers = Array.from({ length: COUNT }, (_, index) => `${index + 1}\n`).join('')
    const output = `${COMMAND}\n${numbers}dsh> `
    expect(Buffer.byteLength(head.text) + 1 + head.gapBytes + Buffer.byteLength(result.viewport)).toBe(Buffer.byteLength(output))
    expect(output.endsWith(result.viewport)).toBe(true)
    // The scrollback evicted the echo: only the result still has it.
    expect(stack.terminals.read(stack.agent, id, { count: 1 }).oldestLine).toBeGreaterThan(echoLine)
  })

  it('leaves it out when the viewport holds the whole output', async () => {
    const result = await stack.run(id, 'seq 1 3')
    expect(result).toMatchObject({ viewport: 'seq 1 3\n1\n2\n3\ndsh> ', truncated: false })
    expect(result.outputHead).toBeUndefined()
  })
})
