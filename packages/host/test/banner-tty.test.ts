import { spawn } from 'node-pty'
import { describe, expect, it } from 'vitest'
import { CLI_ARGS, REPO_ROOT, SNAPSHOT_CONFIG, TSX } from './helpers'

describe('dsh-terminal mcp started by a person in a terminal', () => {
  it('prints the banner on the terminal and quits at Ctrl-D', async () => {
    const pty = spawn(TSX, [...CLI_ARGS, 'mcp', '--config', SNAPSHOT_CONFIG], {
      cwd: REPO_ROOT,
      cols: 200,
      rows: 40,
      env: { ...process.env, FORCE_COLOR: '0' } as Record<string, string>,
    })
    let screen = ''
    let sawBanner!: () => void
    const banner = new Promise<void>((resolve) => (sawBanner = resolve))
    pty.onData((data) => {
      screen += data
      if (screen.includes('(Ctrl-C or Ctrl-D quits)') && screen.includes('workspace:')) sawBanner()
    })
    const exited = new Promise<number>((resolve) => pty.onExit(({ exitCode }) => resolve(exitCode)))
    await banner
    pty.write('\x04')
    expect(await exited).toBe(0)
    const text = screen.replace(/\r/g, '')
    expect(text).toMatch(/claude mcp add dsh-terminal -- pnpm --silent --dir \S.* start\n/)
    expect(text).toContain(REPO_ROOT)
    expect(text).toContain('"mcpServers"')
    expect(text).toContain(`composition: ${SNAPSHOT_CONFIG}`)
  })
})
