import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { parseConfig } from '../src/config'
import { decodeMarkerStatus, NONCE_VARIABLE, SHELL_PROMPT_COMMAND } from '../src/prompt-protocol'
import { resolveShellLaunch, resolveWorkingDirectory } from '../src/shell-launch'

const dir = mkdtempSync(join(tmpdir(), 'dsh-launch-'))
const file = join(dir, 'a-file')
writeFileSync(file, 'x')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const request = { sessionId: 'pty-7', ownerId: 'agent-3', nonce: 123456 }

describe('shell launch', () => {
  it('resolves the bash dialect defaults, the env overrides and the cwd', async () => {
    const launch = await resolveShellLaunch(parseConfig(), { ...request, cwd: dir })
    expect(launch.argv).toEqual(['bash', '--noprofile', '--norc', '-i'])
    expect(launch.cwd).toBe(dir)
    expect(launch.env).toEqual({
      TERM: 'dumb',
      PAGER: 'cat',
      GIT_PAGER: 'cat',
      MANPAGER: 'cat',
      GIT_EDITOR: ':',
      GIT_TERMINAL_PROMPT: '0',
      HISTFILE: '',
      PS1: 'dsh> ',
      PS2: '> ',
      PROMPT_COMMAND: SHELL_PROMPT_COMMAND,
      [NONCE_VARIABLE]: '123456',
      DSH_TERMINAL_SESSION_ID: 'pty-7',
      DSH_TERMINAL_OWNER: 'agent-3',
    })
  })

  it('uses a configured shell and arguments', async () => {
    const launch = await resolveShellLaunch(parseConfig({ shellPath: 'zsh', shellArgs: ['-f'] }), request)
    expect(launch.argv).toEqual(['zsh', '-f'])
    expect(launch.cwd).toBe(process.cwd())
  })

  it('validates the working directory', async () => {
    await expect(resolveWorkingDirectory(join(dir, 'missing'))).rejects.toMatchObject({ code: 'INVALID_CWD', message: `PTY working directory ${JSON.stringify(join(dir, 'missing'))} does not exist` })
    await expect(resolveWorkingDirectory(file)).rejects.toMatchObject({ code: 'INVALID_CWD', message: `PTY working directory ${JSON.stringify(file)} is not a directory` })
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
