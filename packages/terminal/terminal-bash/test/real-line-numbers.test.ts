import type { TerminalReadRequest, TerminalSendResult, TerminalSessionId } from 'dsh-terminal'
import { eventually } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PATIENT, startStack, type Stack } from './support/stack'

// A send's result names the scrollback line its viewport starts on, and reads address the scrollback
// by absolute line numbers that survive eviction: through the real provider, registry and bash.

/** The lines of one read page (none for an empty page). */
function readLines(stack: Stack, id: TerminalSessionId, request: TerminalReadRequest): string[] {
  const page = stack.terminals.read(stack.agent, id, request)
  return page.lineEnd === 0 ? [] : page.text.split('\n')
}

/** Viewport lines `index … index + count − 1` of `result` are scrollback lines from `firstLine + index` on (line 0 the end of its line). */
function expectMapped(stack: Stack, id: TerminalSessionId, result: TerminalSendResult, indexes: number[], count: number): void {
  const viewport = result.viewport.split('\n')
  const firstLine = result.firstLine as number
  expect(firstLine).toBeGreaterThanOrEqual(1)
  for (const index of indexes) {
    const wanted = viewport.slice(index, index + count)
    const got = readLines(stack, id, { fromLine: firstLine + index, count })
    expect(got).toHaveLength(wanted.length)
    if (index === 0) {
      expect(got[0]?.endsWith(wanted[0] as string)).toBe(true)
      expect(got.slice(1)).toEqual(wanted.slice(1))
    } else expect(got).toEqual(wanted)
  }
}

describe('line numbers of a send and of the scrollback', () => {
  let stack: Stack
  let id: TerminalSessionId

  beforeAll(async () => {
    stack = await startStack(PATIENT)
    id = (await stack.open()).sessionId
  })

  afterAll(async () => {
    await stack.dispose()
  })

  it('reads back any run of viewport lines by firstLine + k', async () => {
    await stack.run(id, 'echo before')
    const result = await stack.run(id, 'seq 1 3000')
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, truncated: false })
    const viewport = result.viewport.split('\n')
    expect(viewport).toHaveLength(3002)
    expectMapped(stack, id, result, [0, 1, 2, 999, 1500, 2995, 3001], 5)
    // The echo line is the prompt's line: the viewport has what followed the prompt.
    expect(readLines(stack, id, { fromLine: result.firstLine as number, count: 1 })).toEqual(['dsh> seq 1 3000'])
    // The newest line is the prompt the send ended on; nothing was evicted.
    const page = stack.terminals.read(stack.agent, id, { count: 1 })
    expect(page).toMatchObject({ text: 'dsh> ', lineEnd: (result.firstLine as number) + 3001, totalLines: (result.firstLine as number) + 3001, oldestLine: 1 })
  })

  it('maps what is left of a send whose output was partly read while it ran', async () => {
    const handle = stack.send(id, 'echo one; sleep 0.5; echo two; echo three')
    let read = ''
    await eventually(() => (read += handle.readOutput().delta).includes('one\n'), '"one" to be read')
    const result = await handle.done
    await handle.released
    expect(read + result.viewport).toMatch(/\none\ntwo\nthree\ndsh> $/)
    // The result starts where the read stopped: after the line `one`, which the read showed.
    const one = stack.terminals.read(stack.agent, id, { offset: 3, count: 1 })
    expect(one.text).toBe('one')
    expect(result.firstLine).toBeGreaterThan(one.lineBegin)
    expectMapped(stack, id, result, [0, 1, 2], 3)
  })

  it('refuses fromLine with offset, and any fromLine that is not a positive integer, with INVALID_REQUEST', () => {
    for (const request of [{ fromLine: 1, offset: 0 }, { fromLine: 0 }, { fromLine: 1.5 }, { fromLine: -1 }]) {
      let refusal: unknown
      try {
        stack.terminals.read(stack.agent, id, request)
      } catch (error) {
        refusal = error
      }
      expect(refusal).toMatchObject({ name: 'TerminalError', code: 'INVALID_REQUEST' })
    }
  })
})

describe('line numbers across eviction and the byte caps', () => {
  const MAX_READ_BYTES = 4096
  let stack: Stack
  let id: TerminalSessionId

  beforeAll(async () => {
    stack = await startStack({ ...PATIENT, scrollbackLines: 2000, scrollbackMaxBytes: 65_536, maxReadBytes: MAX_READ_BYTES })
    id = (await stack.open()).sessionId
  })

  afterAll(async () => {
    await stack.dispose()
  })

  it('maps a result that lost its head to the send’s byte bound, after the scrollback evicted older lines', async () => {
    const result = await stack.run(id, 'seq 1 3000')
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, truncated: true })
    const viewport = result.viewport.split('\n')
    expect(viewport.at(-2)).toBe('3000')
    const last = viewport.length - 1
    expectMapped(stack, id, result, [0, 1, 2, 100, last - 4, last], 4)
    // `n` was printed on line firstLine + (its index in the viewport): line numbers count from the session's start.
    const index = viewport.indexOf('2500')
    expect(readLines(stack, id, { fromLine: (result.firstLine as number) + index, count: 1 })).toEqual(['2500'])
    const page = stack.terminals.read(stack.agent, id, { count: 1 })
    // 2000 completed lines are retained, plus the prompt: the oldest moved past line 1000.
    expect(page.oldestLine).toBe(page.totalLines - 2000)
    expect(page.oldestLine).toBeGreaterThan(1000)
    expect(page.lineEnd).toBe(page.totalLines)
  })

  it('starts a window that reaches evicted lines at the oldest retained one, and marks it truncated', () => {
    const { oldestLine, totalLines } = stack.terminals.read(stack.agent, id, { count: 1 })
    const oldest = readLines(stack, id, { fromLine: oldestLine, count: 2 })
    expect(stack.terminals.read(stack.agent, id, { fromLine: oldestLine - 5, count: 7 })).toEqual({
      text: oldest.join('\n'),
      totalLines,
      lineBegin: oldestLine,
      lineEnd: oldestLine + 1,
      oldestLine,
      truncated: true,
    })
    expect(stack.terminals.read(stack.agent, id, { fromLine: 1, count: 2 })).toMatchObject({ text: '', lineBegin: 0, lineEnd: 0, truncated: true })
    expect(stack.terminals.read(stack.agent, id, { fromLine: totalLines + 1 })).toEqual({
      text: '',
      totalLines,
      lineBegin: 0,
      lineEnd: 0,
      oldestLine,
      truncated: false,
    })
  })

  it('pages forward in whole lines under the byte cap, each page continuing at lineEnd + 1', () => {
    const { oldestLine, totalLines } = stack.terminals.read(stack.agent, id, { count: 1 })
    const lines: string[] = []
    let next = oldestLine
    while (next <= totalLines) {
      const page = stack.terminals.read(stack.agent, id, { fromLine: next, count: 100_000 })
      expect(page).toMatchObject({ lineBegin: next, truncated: false })
      expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(MAX_READ_BYTES)
      expect(page.text.split('\n')).toHaveLength(page.lineEnd - page.lineBegin + 1)
      lines.push(...page.text.split('\n'))
      next = page.lineEnd + 1
    }
    expect(lines).toHaveLength(totalLines - oldestLine + 1)
    // The retained numbers of `seq` follow each other, and the pages end on the prompt.
    const numbers = lines.filter((line) => /^\d+$/.test(line)).map(Number)
    expect(numbers.at(-1)).toBe(3000)
    expect(numbers.every((value, index) => index === 0 || value === (numbers[index - 1] as number) + 1)).toBe(true)
    expect(lines.at(-1)).toBe('dsh> ')
  })

  it('cuts one line longer than the cap at its head, never inside a UTF-8 sequence', async () => {
    const result = await stack.run(id, "printf '€%.0s' $(seq 1 2000); echo")
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, truncated: true })
    const line = stack.terminals.read(stack.agent, id, { offset: 1, count: 1 }).lineBegin
    // The send's own bound kept only the end of that 6000-byte line: its viewport starts inside it.
    expect(result.firstLine).toBe(line)
    expect(result.viewport).toMatch(/^€+\ndsh> $/)
    // 1365 × 3 bytes fit in 4096; a 1366th would not.
    expect(stack.terminals.read(stack.agent, id, { fromLine: line, count: 3 })).toMatchObject({
      text: '€'.repeat(1365),
      lineBegin: line,
      lineEnd: line,
      truncated: true,
    })
  })

  it('maps a waitFor result and the earlier output that followed the match', async () => {
    const result = await stack.run(id, 'for i in 1 2 3; do echo "item $i"; done; echo READY; for i in 1 2 3; do echo "after $i"; done', {
      waitFor: '^READY$',
    })
    expect(result).toMatchObject({ waitReason: 'output_match', viewport: expect.stringMatching(/\nitem 3\nREADY$/) })
    expectMapped(stack, id, result, [0, 1, 3], 2)
    // Wait for the prompt without a read of the newest line, which would take the earlier output.
    await eventually(() => stack.terminals.read(stack.agent, id, { offset: 1, count: 1 }).text === 'after 3', '"after 3" to be printed')
    const next = await stack.run(id, 'true')
    expect(next.earlierOutput).toBe('after 1\nafter 2\nafter 3\ndsh> ')
    const earlierLine = next.earlierFirstLine as number
    expect(readLines(stack, id, { fromLine: earlierLine, count: 4 })).toEqual(['after 1', 'after 2', 'after 3', 'dsh> true'])
    expect(earlierLine).toBe((result.firstLine as number) + result.viewport.split('\n').length)
    expectMapped(stack, id, next, [0, 1], 2)
  })

  it('takes earlier output on a fromLine read only when the page reaches the newest line', async () => {
    const late = async (word: string) => {
      expect(await stack.run(id, `sleep 1; echo ${word}`, { idleMs: 300 })).toMatchObject({ waitReason: 'inferred_idle' })
      await eventually(() => stack.terminals.read(stack.agent, id, { offset: 1, count: 1 }).text === word, `"${word}" to be printed`)
      return stack.terminals.read(stack.agent, id, { offset: 1, count: 1 }).lineBegin
    }
    const shortOf = await late('NOT-REACHED')
    expect(stack.terminals.read(stack.agent, id, { fromLine: shortOf, count: 1 }).text).toBe('NOT-REACHED')
    expect((await stack.run(id, 'true')).earlierOutput).toBe('NOT-REACHED\ndsh> ')
    const reaching = await late('REACHED')
    expect(stack.terminals.read(stack.agent, id, { fromLine: reaching, count: 2 }).text).toBe('REACHED\ndsh> ')
    expect((await stack.run(id, 'true')).earlierOutput).toBeUndefined()
  })
})
