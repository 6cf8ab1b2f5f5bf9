import { describe, expect, it } from 'vitest'
import { formatResponse, MALFORMED_REQUEST, parseRequestLine, responseFor } from '../src/headless/json-lines'

describe('request lines', () => {
  it('accepts an object with a tool name; id and arguments are passed through', () => {
    expect(parseRequestLine('{"id": "a", "tool": "terminal_list", "arguments": {"x": 1}}')).toEqual({
      ok: true,
      request: { id: 'a', tool: 'terminal_list', arguments: { x: 1 } },
    })
    expect(parseRequestLine('{"tool": "terminal_list"}')).toEqual({ ok: true, request: { id: null, tool: 'terminal_list' } })
  })

  it.each([
    ['not json', null, /not valid JSON/],
    ['[1, 2]', null, /expected a JSON object/],
    ['"terminal_list"', null, /expected a JSON object/],
    ['null', null, /expected a JSON object/],
    ['{"id": 7}', 7, /"tool" must be a non-empty string/],
    ['{"id": {"deep": true}, "tool": ""}', { deep: true }, /"tool" must be a non-empty string/],
    ['{"id": 8, "tool": 42}', 8, /"tool" must be a non-empty string/],
  ])('answers %s with an error line, never an exception', (line, id, message) => {
    const parsed = parseRequestLine(line)
    expect(parsed.ok).toBe(false)
    if (parsed.ok) return
    expect(parsed.response).toEqual({ id, isError: true, text: expect.stringMatching(message), meta: { errorCode: MALFORMED_REQUEST } })
    expect(parsed.response.text).toMatch(/^Error: malformed request line: /)
  })
})

describe('response lines', () => {
  it('joins the text blocks and adds the error code of a failed call to meta', () => {
    const response = responseFor(3, {
      callId: 'c',
      name: 'terminal_close',
      content: [{ type: 'text', text: 'Error: unknown PTY session pty-9' }],
      isError: true,
      error: { code: 'NO_SESSION', message: 'unknown PTY session pty-9' },
      presentation: { kind: 'delete', title: 'close pty-9' },
    })
    expect(response).toEqual({ id: 3, isError: true, text: 'Error: unknown PTY session pty-9', meta: { errorCode: 'NO_SESSION' } })
  })

  it('is exactly one line, whatever the text holds', () => {
    const line = formatResponse({ id: 1, isError: false, text: 'a\nb\r\n\u2028c', meta: { big: 1n as unknown } })
    expect(line.endsWith('\n')).toBe(true)
    expect(line.slice(0, -1)).not.toMatch(/[\n\r\u2028\u2029]/)
    expect(JSON.parse(line)).toEqual({ id: 1, isError: false, text: 'a\nb\r\n\u2028c', meta: {} })
  })
})
