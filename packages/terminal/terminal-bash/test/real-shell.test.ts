import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TerminalSessionId } from 'dsh-terminal'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from './support/stack'

// Real bash in a real PTY through the real node-pty provider and registry.
let stack: Stack
let id: TerminalSessionId
const work = mkdtempSync(join(tmpdir(), 'dsh-shell-'))

beforeAll(async () => {
  process.env.DSH_TEST_SECRET_TOKEN = 'leaked-token'
  process.env.MY_API_KEY = 'leaked-key'
  stack = await startStack()
  const opened = await stack.open({ name: 'main', cwd: work })
  id = opened.sessionId
  expect(opened.motd.endsWith('dsh> ')).toBe(true)
})

afterAll(async () => {
  delete process.env.DSH_TEST_SECRET_TOKEN
  delete process.env.MY_API_KEY
  await stack.dispose()
  rmSync(work, { recursive: true, force: true })
})

describe('a persistent shell', () => {
  it('starts in the requested cwd and keeps cwd, exports and functions across sends', async () => {
    expect((await stack.run(id, 'pwd')).viewport).toBe(`pwd\n${work}\ndsh> `)
    await stack.run(id, 'mkdir -p sub && cd sub')
    await stack.run(id, 'export GREETING=hello')
    await stack.run(id, 'greet() { echo "$GREETING from $(basename "$PWD")"; }')
    const result = await stack.run(id, 'greet')
    expect(result).toEqual({
      viewport: 'greet\nhello from sub\ndsh> ',
      waitReason: 'stdin_read',
      sessionStatus: { kind: 'running' },
      truncated: false,
      firstLine: expect.any(Number),
      exitCode: 0,
      input: { kind: 'prompt' },
    })
    expect(stack.terminals.read(stack.agent, id, { fromLine: result.firstLine as number, count: 3 }).text).toBe('dsh> greet\nhello from sub\ndsh> ')
    await stack.run(id, 'cd ..')
  })

  it('keeps an activated venv', async () => {
    const created = await stack.run(id, 'python3 -m venv --without-pip venv && . venv/bin/activate')
    expect(created).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
    const probe = await stack.run(id, 'python -c "import sys; print(sys.prefix)"')
    expect(probe.viewport).toContain(join(work, 'venv'))
    await stack.run(id, 'deactivate')
  })

  it('reports the exit status of the last command', async () => {
    expect(await stack.run(id, 'false')).toMatchObject({ exitCode: 1, waitReason: 'stdin_read' })
    expect(await stack.run(id, 'true')).toMatchObject({ exitCode: 0 })
    expect(await stack.run(id, '(exit 42)')).toMatchObject({ exitCode: 42 })
    // The user still sees the command's own status.
    await stack.run(id, 'false')
    expect((await stack.run(id, 'echo "status=$?"')).viewport).toContain('status=1')
  })

  it('heals a PS1 override at the next prompt', async () => {
    const changed = await stack.run(id, "PS1='custom$ '")
    expect(changed).toMatchObject({ waitReason: 'stdin_read' })
    expect(changed.viewport.endsWith('dsh> ')).toBe(true)
    expect((await stack.run(id, 'echo healed')).viewport).toBe('echo healed\nhealed\ndsh> ')
  })

  it('returns promptly from a heredoc or an unclosed quote, waiting for more input', async () => {
    const heredoc = await stack.run(id, 'cat <<EOF')
    expect(heredoc).toMatchObject({ viewport: 'cat <<EOF\n> ', waitReason: 'stdin_read' })
    expect((await stack.run(id, 'line one')).viewport).toBe('line one\n> ')
    expect((await stack.run(id, 'EOF')).viewport).toBe('EOF\nline one\ndsh> ')
    const quote = await stack.run(id, 'echo "open')
    expect(quote).toMatchObject({ viewport: 'echo "open\n> ', waitReason: 'stdin_read' })
    expect(await stack.run(id, 'closed"')).toMatchObject({ viewport: 'closed"\nopen\nclosed\ndsh> ', exitCode: 0 })
  })

  it('runs a 10 KB single-line command', async () => {
    const payload = 'x'.repeat(10_000)
    const result = await stack.run(id, `printf %s '${payload}' | wc -c`)
    expect(result.waitReason).toBe('stdin_read')
    expect(result.viewport.split('\n').slice(-2)).toEqual(['10000', 'dsh> '])
  })

  it('does not settle a sleeping command before its output', async () => {
    const result = await stack.run(id, 'sleep 2; echo done-after-sleep')
    expect(result.viewport).toContain('\ndone-after-sleep\n')
    expect(result.waitReason).toBe('stdin_read')
  })

  it('does not settle on output that contains the prompt text or even a marker', async () => {
    const text = await stack.run(id, "echo 'dsh> '; sleep 1; echo tail-after-text")
    expect(text.viewport).toContain('tail-after-text')
    const forged = await stack.run(id, "printf '\\033]133;D;0\\007dsh> '; sleep 1; echo tail-after-marker")
    expect(forged.viewport).toContain('tail-after-marker')
  })

  it('is not blocked by a background job', async () => {
    const result = await stack.run(id, 'sleep 100 &')
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
    expect(result.viewport).toMatch(/\[1\] \d+/)
    await stack.run(id, 'kill %1; wait')
  })

  it('does not leak credential-shaped or harness variables, and exports the session identity', async () => {
    const result = await stack.run(
      id,
      'echo "[${MY_API_KEY-unset}] [${DSH_TEST_SECRET_TOKEN-unset}] [${DSH_PROMPT_NONCE-unset}] $DSH_TERMINAL_SESSION_ID $DSH_TERMINAL_OWNER $TERM $PAGER"',
    )
    expect(result.viewport.split('\n')[1]).toBe(`[unset] [unset] [unset] ${id} ${stack.agent.id} xterm-256color cat`)
  })

  it('pages the scrollback', async () => {
    await stack.run(id, 'for i in 1 2 3 4 5; do echo "row $i"; done')
    const page = stack.terminals.read(stack.agent, id, { offset: 1, count: 3 })
    expect(page.text).toBe('row 3\nrow 4\nrow 5')
    expect(page.lineEnd - page.lineBegin).toBe(2)
    expect(page.totalLines).toBeGreaterThan(page.lineEnd)
  })

  it('bounds a flood in the result and still settles exactly', async () => {
    const result = await stack.run(id, 'seq 1 300000')
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, truncated: true })
    expect(Buffer.byteLength(result.viewport)).toBeLessThanOrEqual(262_144)
    expect(result.viewport.endsWith('299999\n300000\ndsh> ')).toBe(true)
  })

  it('rejects a cwd that does not exist', async () => {
    await expect(stack.open({ cwd: join(work, 'nope') })).rejects.toMatchObject({ code: 'INVALID_CWD' })
  })
})
