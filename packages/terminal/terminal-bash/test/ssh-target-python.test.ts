import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { hostRuntimeDir } from 'dsh-sandbox'
import * as remotePlugin from 'dsh-subprocess-remote'
import { type SshHost, startSshHost } from 'dsh-testkit'
import type { TerminalSessionId } from 'dsh-terminal'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pythonStartupFile } from '../src/repl/python-startup'
import { type SshTarget, sshTarget, sshTargetRuns } from './support/ssh-target'
import { PATIENT, type Stack, startStack } from './support/stack'

/*
 * A Python REPL on a named ssh target marks its prompts: the startup file's content travels with
 * the spawn and the session host on the target writes it there (its per-user runtime directory),
 * so the REPL finds it whatever path this install has here. The shell's PYTHONSTARTUP names the
 * target's file, never this machine's.
 */

let host: SshHost
let target: SshTarget
let stack: Stack
let id: TerminalSessionId

beforeAll(async () => {
  if (!sshTargetRuns) return
  host = await startSshHost()
  target = sshTarget(host)
  // Both the default and the named target go over ssh: nothing starts a session host on this side.
  const config = { connect: target.connect, targets: { build: { connect: target.connect } }, startTimeoutMs: 20_000 }
  stack = await startStack(PATIENT, { provider: { plugin: remotePlugin, config } })
  id = (await stack.open({ target: 'build', cwd: '/tmp' })).sessionId
}, 60_000)

afterAll(async () => {
  await stack?.dispose()
  await host?.stop()
  target?.remove()
}, 60_000)

describe.skipIf(!sshTargetRuns)('a python3 REPL on a named ssh target', () => {
  it("the shell's PYTHONSTARTUP is a file the target's session host wrote, with the startup file's content", async () => {
    const echoed = await stack.run(id, 'echo "startup=$PYTHONSTARTUP"')
    const path = /^startup=(\/\S+)$/m.exec(echoed.viewport)?.[1]
    const uid = process.getuid?.() ?? -1
    expect(path?.startsWith(`${join(hostRuntimeDir(uid), 'env-files')}/`)).toBe(true)
    expect(path).not.toBe(pythonStartupFile())
    expect(readFileSync(path as string, 'utf8')).toBe(readFileSync(pythonStartupFile() as string, 'utf8'))
  })

  it('marks its prompts there: the sends settle on them with exact output', async () => {
    expect(await stack.run(id, 'python3 -q')).toMatchObject({ waitReason: 'stdin_read', viewport: 'python3 -q\n>>> ', input: { kind: 'program' } })
    // The marking startup file ran on the target: the prompt is its object, and it popped its variables.
    const looked = await stack.run(id, 'import os, sys; print(type(sys.ps1).__name__, os.environ.get("DSH_PYTHON_MARKER"), os.environ.get("PYTHONSTARTUP"))')
    expect(looked.viewport).toContain('MarkedPrompt None None\n>>> ')
    expect(await stack.run(id, '1+1')).toMatchObject({ viewport: '1+1\n2\n>>> ', waitReason: 'stdin_read' })
    expect(await stack.run(id, 'for i in range(2):')).toMatchObject({ viewport: 'for i in range(2):\n... ', waitReason: 'stdin_read' })
    expect(await stack.run(id, '  print("row", i)')).toMatchObject({ viewport: '  print("row", i)\n... ' })
    expect(await stack.run(id, '')).toMatchObject({ viewport: '\nrow 0\nrow 1\n>>> ' })
    expect(await stack.run(id, 'exit()')).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, input: { kind: 'prompt' } })
  })
})
