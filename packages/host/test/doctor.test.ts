import { writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { parseCliArgs } from '../src/cli/args'
import { DEFAULT_CONFIG, tempDir } from './helpers'
import { runCli } from './process'

// `dsh-terminal-mcp doctor` as a user runs it: the real composition, this machine's bubblewrap, and
// a composition of the test's own whose bubblewrap does not exist, as on a machine without it.
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()))
})

/** An overlay of the default composition with `patches` (YAML lines under `patches:`). */
async function overlay(name: string, patches: readonly string[]): Promise<string> {
  const { dir, remove } = await tempDir('dsh-doctor-')
  cleanups.push(remove)
  const path = join(dir, name)
  const lines = ['- id: base', '  name: cordis:include', '  config:', `    path: ${DEFAULT_CONFIG}`, '    patches:', ...patches.map((line) => `      ${line}`)]
  await writeFile(path, `${lines.join('\n')}\n`)
  return path
}

/** The default composition, with a sandbox that looks for bubblewrap where there is none. */
function withoutBubblewrap(): Promise<string> {
  return overlay('no-bwrap.yml', ['- id: sandbox', '  config:', '    bwrapPath: /nonexistent/bwrap'])
}

describe('doctor on the command line', () => {
  it('parses its options, and refuses what only a server takes', () => {
    expect(parseCliArgs(['doctor'])).toEqual({ kind: 'doctor', json: false })
    expect(parseCliArgs(['doctor', '--preset', 'danger-full-access', '--json'])).toEqual({ kind: 'doctor', json: true, preset: 'danger-full-access' })
    expect(parseCliArgs(['doctor', '--http', '0'])).toEqual({ kind: 'usage-error', message: '--http does not go with doctor' })
    expect(parseCliArgs(['doctor', 'now'])).toEqual({ kind: 'usage-error', message: 'doctor takes no argument, got "now"' })
    expect(parseCliArgs(['mcp', '--json'])).toEqual({ kind: 'usage-error', message: '--json goes with doctor' })
  })

  it('says the default composition is confined here, check by check, and exits 0', async () => {
    const run = await runCli(['doctor'])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^ {2}ok {7}composition {6}workspace-write, the host's network$/m)
    expect(run.stdout).toMatch(/^ {2}ok {7}bubblewrap {7}\/\S+bwrap \(bubblewrap \d/m)
    expect(run.stdout).toMatch(/^ {2}ok {7}trial sandbox/m)
    expect(run.stdout).toMatch(/^ {2}(ok {7}|warn {5})cgroups/m)
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe('Sessions are confined (workspace-write).')
  })

  it('names what is missing and the fixes where bubblewrap is not there, and exits 1', async () => {
    const run = await runCli(['doctor', '--config', await withoutBubblewrap()])
    expect(run.code).toBe(1)
    expect(run.stdout).toMatch(/^ {2}missing {2}bubblewrap {7}no executable "\/nonexistent\/bwrap" found$/m)
    expect(run.stdout).toContain('fix: apt-get install bubblewrap')
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe(
      'Sessions cannot be confined here (bubblewrap, trial sandbox): apply the fixes above, or start with --preset danger-full-access to run them unsandboxed.',
    )
  })

  it('names the allowlist network and its hosts', async () => {
    const config = await overlay('allowlist.yml', [
      '- id: sandbox-policy',
      '  config:',
      '    network: allowlist',
      "    allowedHosts: [github.com, '*.npmjs.org']",
    ])
    const run = await runCli(['doctor', '--config', config])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^ {2}ok {7}composition {6}workspace-write, no network but an egress proxy to 2 allowed hosts \(github\.com, \*\.npmjs\.org\)$/m)
  })

  it('accepts a composition that asks for no sandbox, and reports JSON on request', async () => {
    const run = await runCli(['doctor', '--preset', 'danger-full-access', '--json'])
    expect(run.code).toBe(0)
    const report = JSON.parse(run.stdout) as { mode: string; ready: boolean; checks: { name: string; state: string }[] }
    expect(report).toMatchObject({ mode: 'danger-full-access', ready: true })
    expect(report.checks[0]).toMatchObject({ name: 'composition', state: 'info' })
  })
})

describe('doctor as an unprivileged user', () => {
  it('confines in a user namespace, and says the cgroups it cannot write', async () => {
    // As root the test drops to nobody; run by another user it already is one.
    const asUser = process.getuid?.() === 0 ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', 'env', 'HOME=/tmp'] : []
    const run = await runCli(['doctor', '--config', DEFAULT_CONFIG], '', tmpdir(), asUser)
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^ {2}ok {7}trial sandbox {4}confines in a user namespace of its own/m)
    expect(run.stdout).toMatch(/^ {2}(ok {7}|warn {5})cgroups/m)
    if (asUser.length > 0) expect(run.stdout).toContain('which this user cannot write')
  })
})

describe('an open the sandbox cannot confine', () => {
  it('fails with SANDBOX_UNAVAILABLE naming doctor and the unsandboxed preset', async () => {
    const request = `${JSON.stringify({ id: 1, tool: 'terminal_open', arguments: { type: 'shell' } })}\n`
    const run = await runCli(['headless', '--config', await withoutBubblewrap()], request)
    const answer = JSON.parse(run.stdout.split('\n')[0] as string) as { isError: boolean; text: string; meta: { errorCode?: string } }
    expect(answer).toMatchObject({ isError: true, meta: { errorCode: 'SANDBOX_UNAVAILABLE' } })
    expect(answer.text).toContain('bubblewrap not found')
    expect(answer.text).toContain('Run `dsh-terminal-mcp doctor` on the host')
    expect(answer.text).toContain('--preset danger-full-access')
  })
})
