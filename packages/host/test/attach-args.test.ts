import { describe, expect, it } from 'vitest'
import { parseCliArgs, USAGE } from '../src/cli/args'
import { formatSessionTable } from '../src/attach/table'
import { LineSplitter, parseClientMessage } from '../src/human/protocol'

describe('the attach command line', () => {
  it('parses attach with and without a session and --read-only, and refuses serving flags with it', () => {
    expect(parseCliArgs(['attach'])).toEqual({ kind: 'attach', readOnly: false })
    expect(parseCliArgs(['attach', 'pty-3', '--read-only'])).toEqual({ kind: 'attach', sessionId: 'pty-3', readOnly: true })
    expect(parseCliArgs(['attach', '4242:pty-3'])).toEqual({ kind: 'attach', sessionId: '4242:pty-3', readOnly: false })
    expect(parseCliArgs(['attach', 'a', 'b'])).toMatchObject({ kind: 'usage-error', message: expect.stringContaining('one session') })
    expect(parseCliArgs(['attach', '--config', 'x.yml'])).toMatchObject({ kind: 'usage-error', message: '--config does not go with attach' })
    expect(parseCliArgs(['mcp', '--read-only'])).toMatchObject({ kind: 'usage-error', message: '--read-only goes with attach' })
    expect(USAGE).toContain('dsh-terminal-mcp attach [<session>] [--read-only]')
  })

  it('parses --web with an optional port, only for mcp', () => {
    expect(parseCliArgs(['--web'])).toEqual({ kind: 'run', command: 'mcp', web: 0 })
    expect(parseCliArgs(['mcp', '--web', '8080'])).toEqual({ kind: 'run', command: 'mcp', web: 8080 })
    expect(parseCliArgs(['mcp', '--web=8081', '--cwd', '/w'])).toEqual({ kind: 'run', command: 'mcp', web: 8081, cwd: '/w' })
    expect(parseCliArgs(['mcp', '--web', '--cwd', '/w'])).toEqual({ kind: 'run', command: 'mcp', web: 0, cwd: '/w' })
    expect(parseCliArgs(['mcp', '--http', '0', '--web'])).toMatchObject({ kind: 'run', web: 0, http: { host: '127.0.0.1', port: 0 } })
    expect(parseCliArgs(['mcp', '--web=99999'])).toMatchObject({ kind: 'usage-error', message: expect.stringContaining('--web wants a port') })
    expect(parseCliArgs(['mcp', '--web', '--web'])).toMatchObject({ kind: 'usage-error', message: '--web given twice' })
    expect(parseCliArgs(['headless', '--web'])).toMatchObject({ kind: 'usage-error', message: '--web goes with the mcp command' })
  })
})

describe('the attach protocol pieces', () => {
  it('splits lines across chunks and refuses one longer than its bound', () => {
    const splitter = new LineSplitter(8)
    expect(splitter.push(Buffer.from('{"a"'))).toEqual([])
    expect(splitter.push(Buffer.from(':1}\n{}\n{'))).toEqual(['{"a":1}', '{}'])
    expect(() => splitter.push(Buffer.from('x'.repeat(8)))).toThrow(expect.objectContaining({ code: 'LINE_TOO_LONG' }))
    expect(parseClientMessage('[1]')).toBe('not a JSON object')
    expect(parseClientMessage('{"type":"attach"}')).toContain('sessionId')
  })

  it('says when there is no host, or no session yet', () => {
    expect(formatSessionTable([])).toContain('No running dsh-terminal host')
    expect(formatSessionTable([{ client: undefined as never, host: { pid: 7, cwd: '/w' }, sessions: [] }])).toBe(
      'No terminal sessions yet.\n  host 7: 0 session(s), cwd /w\n',
    )
  })
})
