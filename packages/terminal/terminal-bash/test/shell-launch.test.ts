import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { resolveSandboxCwd } from 'dsh-sandbox-policy'
import { afterAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../src/config'
import { decodeMarkerStatus, NONCE_VARIABLE, SHELL_CONTINUATION_PS2, SHELL_PROMPT_COMMAND } from '../src/prompt-protocol'
import { confineShellArgv } from '../src/sandbox/boundary'
import { resolveShellLaunch, resolveWorkingDirectory } from '../src/shell-launch'

const dir = mkdtempSync(join(tmpdir(), 'dsh-launch-'))
const file = join(dir, 'a-file')
writeFileSync(file, 'x')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const request = { sessionId: 'pty-7', ownerId: 'agent-3', nonce: 123456 }

/** Unconfined, with the process cwd as the workspace: no sandbox is ever asked for. */
const unconfined = {
  policy: { mode: 'danger-full-access' as const, workspaceRoot: process.cwd() },
  resolveCwd: resolveSandboxCwd,
  sandbox: () => {
    throw new Error('danger-full-access must not read the sandbox')
  },
}

describe('shell launch', () => {
  it('resolves the bash dialect defaults, the env overrides and the cwd', async () => {
    const launch = await resolveShellLaunch(parseConfig(), { ...request, cwd: dir }, unconfined)
    expect(launch.argv).toEqual(['bash', '--noprofile', '--norc', '-i'])
    expect(launch.cwd).toBe(dir)
    expect(launch.env).toEqual({
      TERM: 'xterm-256color',
      PAGER: 'cat',
      GIT_PAGER: 'cat',
      MANPAGER: 'cat',
      GIT_EDITOR: ':',
      GIT_TERMINAL_PROMPT: '0',
      HISTFILE: '',
      NODE_REPL_HISTORY: '',
      PS1: 'dsh> ',
      PS2: SHELL_CONTINUATION_PS2,
      PROMPT_COMMAND: SHELL_PROMPT_COMMAND,
      [NONCE_VARIABLE]: '123456',
      DSH_TERMINAL_SESSION_ID: 'pty-7',
      DSH_TERMINAL_OWNER: 'agent-3',
    })
  })

  it('uses a configured shell and arguments', async () => {
    const launch = await resolveShellLaunch(parseConfig({ shellPath: 'zsh', shellArgs: ['-f'] }), request, unconfined)
    expect(launch.argv).toEqual(['zsh', '-f'])
    expect(launch.cwd).toBe(process.cwd())
  })

  it('validates the working directory', async () => {
    await expect(resolveWorkingDirectory(join(dir, 'missing'))).rejects.toMatchObject({
      code: 'INVALID_CWD',
      message: `PTY working directory ${JSON.stringify(join(dir, 'missing'))} does not exist`,
    })
    await expect(resolveWorkingDirectory(file)).rejects.toMatchObject({
      code: 'INVALID_CWD',
      message: `PTY working directory ${JSON.stringify(file)} is not a directory`,
    })
    await expect(resolveWorkingDirectory('')).rejects.toMatchObject({ code: 'INVALID_CWD' })
    expect(await resolveWorkingDirectory('.')).toBe(process.cwd())
  })

  it('decodes only markers that carry the nonce', () => {
    expect(decodeMarkerStatus(123456000, 123456)).toBe(0)
    expect(decodeMarkerStatus(123456130, 123456)).toBe(130)
    expect(decodeMarkerStatus(654321000, 123456)).toBeUndefined()
    expect(decodeMarkerStatus(0, 123456)).toBeUndefined()
    expect(decodeMarkerStatus(null, 123456)).toBeUndefined()
    expect(decodeMarkerStatus(123456999, 123456)).toBeUndefined()
  })
})

describe('confining the shell argv', () => {
  const confinedBoundary = (sandbox: () => { confine: (argv: readonly string[]) => Promise<string[]> } | undefined) => ({
    policy: { mode: 'read-only' as const, workspaceRoot: dir },
    resolveCwd: resolveSandboxCwd,
    sandbox,
  })

  it('treats a provider that cannot be read as no provider', async () => {
    const boundary = confinedBoundary(() => {
      throw new Error('context disposed')
    })
    await expect(confineShellArgv(['bash'], boundary, dir)).rejects.toMatchObject({ code: 'SANDBOX_REQUIRED' })
  })

  it('refuses a result that is not a command', async () => {
    for (const result of [[], [''], ['bwrap', 7], 'bwrap --', undefined]) {
      const boundary = confinedBoundary(() => ({ confine: async () => result as string[] }))
      await expect(confineShellArgv(['bash'], boundary, dir)).rejects.toMatchObject({ code: 'SANDBOX_INVALID_ARGV' })
    }
  })

  it('returns a copy of the wrapped argv, asking the provider once', async () => {
    const calls: unknown[] = []
    const wrapped = ['jail', '--', 'bash']
    const boundary = confinedBoundary(() => ({
      confine: async (argv: readonly string[], policy?: unknown) => {
        calls.push([argv, policy])
        return wrapped
      },
    }))
    const argv = await confineShellArgv(['bash'], boundary, dir)
    expect(argv).toEqual(wrapped)
    expect(argv).not.toBe(wrapped)
    expect(calls).toEqual([[['bash'], { mode: 'read-only', workspaceRoot: dir, cwd: dir }]])
  })
})
