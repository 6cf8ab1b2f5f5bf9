import { existsSync, readdirSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { parseCliArgs } from '../src/cli/args'
import { compositionsRoot, PRESETS, presetPath, resolveConfigPath, SHIPPED_COMPOSITIONS } from '../src/compose/config-path'
import { PACKAGE_ROOT } from '../src/package-root'
import { CLI_ARGS, DANGER_CONFIG, DEFAULT_CONFIG, load, READ_ONLY_CONFIG, REPO_ROOT, SNAPSHOT_CONFIG, tempDir, TSX } from './helpers'
import { HANDSHAKE, jsonRpcLines, runCli, start } from './process'

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()))
})

async function scratch(prefix: string): Promise<string> {
  const { dir, remove } = await tempDir(prefix)
  cleanups.push(remove)
  return dir
}

/** A folder laid out like dist/compositions/ of an installed package. */
async function shippedLayout(): Promise<string> {
  const dir = await scratch('dsh-shipped-')
  await mkdir(join(dir, 'examples'))
  for (const file of Object.values(PRESETS)) await writeFile(join(dir, file), '# copy\n')
  return dir
}

describe('which composition a command serves', () => {
  it('takes --config, else ./cordis.yml, else the default of the compositions root, else names the fix', async () => {
    const empty = await scratch('dsh-no-config-')
    const shipped = await shippedLayout()
    expect(resolveConfigPath('my.yml', empty, () => shipped)).toBe(join(empty, 'my.yml'))
    expect(resolveConfigPath(undefined, empty, () => shipped)).toBe(join(shipped, 'cordis.yml'))
    expect(() => resolveConfigPath(undefined, empty, () => undefined)).toThrow(
      `no cordis.yml in ${empty} and no default composition at ${join(SHIPPED_COMPOSITIONS, 'cordis.yml')}; pass --config <path>`,
    )
    await writeFile(join(empty, 'cordis.yml'), '# local\n')
    expect(resolveConfigPath(undefined, empty, () => shipped)).toBe(join(empty, 'cordis.yml'))
  })

  it('prefers the checkout, falls back to the copies an installed package ships, and has none without either', async () => {
    const shipped = await shippedLayout()
    const checkout = join(DEFAULT_CONFIG, '..')
    expect(compositionsRoot([checkout, shipped])).toBe(checkout)
    expect(compositionsRoot([undefined, shipped])).toBe(shipped)
    expect(compositionsRoot([undefined, await scratch('dsh-nothing-shipped-')])).toBeUndefined()
    expect(compositionsRoot()).toBe(checkout)
    expect(SHIPPED_COMPOSITIONS).toBe(join(PACKAGE_ROOT, 'dist', 'compositions'))
  })

  it('loads every overlay in examples/; allowlist.yml resolves to the allowlist network with its hosts', async () => {
    const overlays = readdirSync(join(REPO_ROOT, 'examples')).filter((file) => file.endsWith('.yml'))
    expect(overlays).toContain('allowlist.yml')
    for (const overlay of overlays) {
      const composition = await load(join(REPO_ROOT, 'examples', overlay))
      try {
        if (overlay !== 'allowlist.yml') continue
        const agent = await composition.agents.create()
        expect(composition.root.sandboxPolicy.resolve(agent)).toMatchObject({
          mode: 'workspace-write',
          network: 'allowlist',
          allowedHosts: expect.arrayContaining(['github.com', 'registry.npmjs.org', 'pypi.org']),
        })
        await agent.dispose()
      } finally {
        await composition.dispose()
      }
    }
  })

  it('resolves every preset to the repository files in a checkout, and names a missing one', () => {
    expect(presetPath('default')).toBe(DEFAULT_CONFIG)
    expect(presetPath('read-only')).toBe(READ_ONLY_CONFIG)
    expect(presetPath('danger-full-access')).toBe(DANGER_CONFIG)
    for (const file of Object.values(PRESETS)) expect(existsSync(join(DEFAULT_CONFIG, '..', file))).toBe(true)
    expect(() => presetPath('read-only', '/nonexistent')).toThrow('preset read-only is not available: /nonexistent/examples/read-only.yml is missing')
  })

  it('parses --preset, refuses an unknown one and --config with it, and defaults the command to mcp', () => {
    expect(parseCliArgs(['--preset', 'danger-full-access'])).toEqual({ kind: 'run', command: 'mcp', preset: 'danger-full-access' })
    expect(parseCliArgs(['headless', '--preset', 'read-only', '--cwd', '/w'])).toEqual({ kind: 'run', command: 'headless', preset: 'read-only', cwd: '/w' })
    expect(parseCliArgs(['--preset', 'yolo'])).toEqual({
      kind: 'usage-error',
      message: 'unknown preset "yolo": default, read-only, danger-full-access, recorded, durable',
    })
    // --durable is --preset durable, for every serving command (and pnpm start -- --durable).
    expect(parseCliArgs(['--durable'])).toEqual({ kind: 'run', command: 'mcp', preset: 'durable' })
    expect(parseCliArgs(['--', 'headless', '--durable'])).toEqual({ kind: 'run', command: 'headless', preset: 'durable' })
    expect(parseCliArgs(['--durable', '--http', '127.0.0.1:0'])).toMatchObject({ kind: 'run', command: 'mcp', preset: 'durable' })
    expect(parseCliArgs(['--preset', 'default', '--config', 'x.yml'])).toEqual({ kind: 'usage-error', message: '--config and --preset exclude each other' })
  })
})

describe('the command without a cordis.yml', () => {
  it('serves MCP when no command is named', async () => {
    const running = start(TSX, [...CLI_ARGS, '--config', SNAPSHOT_CONFIG])
    running.child.stdin.write(HANDSHAKE)
    await running.waitForStdout((stdout) => jsonRpcLines(stdout).some((message) => message.id === 1))
    running.child.stdin.end()
    const result = await running.finished
    expect(result.code).toBe(0)
    expect(jsonRpcLines(result.stdout).map((message) => message.id)).toEqual([0, 1])
  })

  it('runs a real shell under --preset danger-full-access from a directory with no cordis.yml', async () => {
    const dir = await scratch('dsh-preset-')
    const input = [
      '{"id": 1, "tool": "terminal_open", "arguments": {"type": "shell"}}',
      '{"id": 2, "tool": "terminal_send", "arguments": {"sessionId": "pty-1", "text": "echo preset-$((6 * 7))"}}',
      '{"id": 3, "tool": "terminal_close", "arguments": {"sessionId": "pty-1"}}',
    ].join('\n')
    const result = await runCli(['headless', '--preset', 'danger-full-access'], `${input}\n`, dir)
    expect(result.code).toBe(0)
    const lines = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: number; isError: boolean; text: string })
    expect(lines.map((line) => [line.id, line.isError])).toEqual([
      [1, false],
      [2, false],
      [3, false],
    ])
    expect(lines[1]!.text).toContain('\npreset-42\n')
  })

  it('answers an unknown preset with exit 2 and nothing on stdout', async () => {
    const result = await runCli(['--preset', 'nope'])
    expect(result).toMatchObject({ code: 2, stdout: '' })
    expect(result.stderr).toMatch(/^dsh-terminal: unknown preset "nope"/)
  })
})
