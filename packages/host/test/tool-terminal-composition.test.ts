import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { children, isAlive } from 'dsh-testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { type Composition, CompositionError } from '../src/compose/load-config'
import { ALL_TOOLS, load, tempDir } from './helpers'

/**
 * The terminal stack as a user writes it in a cordis.yml: a real bash behind dsh-terminal-bash,
 * reached through dsh-tool-terminal, each configured from the file. Unconfined, so the test is
 * about the tools (dsh-terminal-bash tests the sandboxed shell; e2e.test.ts the default file).
 */
const TERMINAL_STACK = `- id: agents
  name: dsh-agent
- id: tools
  name: dsh-tools
- id: jobs
  name: dsh-jobs
- id: job-tools
  name: dsh-tool-jobs
- id: subprocess
  name: dsh-subprocess-local
- id: sandbox-policy
  name: dsh-sandbox-policy
  config:
    mode: danger-full-access
- id: terminals
  name: dsh-terminal
- id: bash
  name: dsh-terminal-bash
  config:
    idleSilenceMs: 5000
    timeoutMs: 20000
- id: terminal-tools
  name: dsh-tool-terminal
  config:
    enableRunInBackground: true
    maxResultBytes: 65536
`

const opened: Composition[] = []
const cleanups: (() => Promise<void>)[] = []

/** Write `yaml` as cordis.yml in a fresh directory and mount it through the host's loader. */
async function mountYaml(yaml: string): Promise<Composition> {
  const { dir, remove } = await tempDir('dsh-host-terminal-stack-')
  cleanups.push(remove)
  await writeFile(join(dir, 'cordis.yml'), yaml)
  const composition = await load(join(dir, 'cordis.yml'))
  opened.push(composition)
  return composition
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((composition) => composition.dispose()))
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()))
  // Nothing the composition started outlives it (children of this test process, zombies excluded).
  expect(children(process.pid).filter(isAlive)).toEqual([])
})

describe('the terminal stack mounted from a cordis.yml', () => {
  it('starts every entry, keeps cd and export between two sends, and ends the shell with its agent', async () => {
    const { root, tools, agents } = await mountYaml(TERMINAL_STACK)
    expect(tools.list().map((tool) => tool.name)).toEqual(ALL_TOOLS)
    const agent = await agents.create()
    const call = async (name: string, args: unknown) => {
      const result = await root.tools.execute({ callId: name, name, arguments: args, agent })
      return result.content.map((block) => block.text).join('\n')
    }
    expect(await call('terminal_open', { type: 'shell', cwd: '/' })).toBe('started terminal session pty-1 [type: shell]\ndsh> ')
    expect(await call('terminal_send', { sessionId: 'pty-1', text: 'cd /tmp && export DSH_LOADER_PROBE=persisted' })).toBe(
      'cd /tmp && export DSH_LOADER_PROBE=persisted\ndsh> \n[wait: stdin_read]\n[input: prompt]\n[exit: 0]\n[session: running]',
    )
    expect(await call('terminal_send', { sessionId: 'pty-1', text: 'echo "$PWD:$DSH_LOADER_PROBE"' })).toBe(
      'echo "$PWD:$DSH_LOADER_PROBE"\n/tmp:persisted\ndsh> \n[wait: stdin_read]\n[input: prompt]\n[exit: 0]\n[session: running]',
    )
    const listed = await root.tools.execute({ callId: 'list', name: 'terminal_list', arguments: {}, agent })
    const [session] = listed.meta!.sessions as { pid: number }[]
    await agent.dispose()
    expect(isAlive(session!.pid)).toBe(false)
  })

  it("refuses to start when dsh-tool-terminal's config is invalid, naming the entry and the field", async () => {
    const error = await mountYaml(TERMINAL_STACK.replace('maxResultBytes: 65536', 'maxResultBytes: 10')).then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect(error).toBeInstanceOf(CompositionError)
    expect((error as CompositionError).failures).toEqual([
      expect.stringMatching(/^terminal-tools \(dsh-tool-terminal\): invalid config:\s+- maxResultBytes must be at least 64 bytes/),
    ])
  })
})
