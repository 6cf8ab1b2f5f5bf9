import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Context, type Fiber } from '@deepseek-ai/cordis'
import Include from '@deepseek-ai/cordis-plugin-include'
import Loader from '@deepseek-ai/cordis-plugin-loader'
import * as agentPlugin from 'dsh-agent'
import * as jobsPlugin from 'dsh-jobs'
import * as terminalPlugin from 'dsh-terminal'
import * as toolTerminalPlugin from 'dsh-tool-terminal'
import * as toolsPlugin from 'dsh-tools'
import { afterEach, describe, expect, it } from 'vitest'
import { children, isAlive } from 'dsh-testkit'
import { bashPlugin, sandboxPolicyPlugin, subprocessLocalPlugin, toolJobsPlugin } from './workspace'

/** Cordis fiber states we check (a const enum upstream, so not importable at runtime). */
const FIBER_PENDING = 0
const FIBER_ACTIVE = 2

/** Every package the cordis.yml names, as loader builtins: no module resolution from the loader's folder. */
const PACKAGES: Record<string, unknown> = {
  'dsh-agent': agentPlugin,
  'dsh-tools': toolsPlugin,
  'dsh-jobs': jobsPlugin,
  'dsh-tool-jobs': toolJobsPlugin,
  'dsh-subprocess-local': subprocessLocalPlugin,
  'dsh-sandbox-policy': sandboxPolicyPlugin,
  'dsh-terminal': terminalPlugin,
  'dsh-terminal-bash': bashPlugin,
  'dsh-tool-terminal': toolTerminalPlugin,
}

/** The real composition, in the loader's top-level list format. */
const COMPOSITION = `
- id: agents
  name: dsh-agent
- id: tools
  name: dsh-tools
- id: jobs
  name: dsh-jobs
- id: job-tools
  name: dsh-tool-jobs
- id: subprocess
  name: dsh-subprocess-local
# Unconfined: these tests are about the tools (dsh-terminal-bash tests the sandboxed shell).
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

/** Include over a file this test owns: package names come from the builtins, nothing is written back. */
class ReadOnlyInclude extends Include {
  override write(): void {}

  override import(name: string, getOuterStack?: () => string[]) {
    return this.ctx.loader.builtins[name] ?? super.import(name, getOuterStack)
  }
}

/**
 * The loader only logs a module that fails to import, a bad config or a failing apply. Await every
 * entry and throw once, naming each entry that is not active, with what the logger received.
 */
async function requireAllActive(loader: Loader, logged: string[]): Promise<void> {
  await loader.await()
  const problems: string[] = []
  for (const entry of loader.entries()) {
    if (entry.disabled) continue
    const label = `${entry.options.id} (${entry.options.name})`
    if (!entry.fiber) {
      problems.push(`${label}: not loaded`)
      continue
    }
    try {
      await entry.fiber.await()
    } catch (error) {
      problems.push(`${label}: ${error instanceof Error ? error.message : String(error)}`)
      continue
    }
    if (entry.fiber.state === FIBER_PENDING) {
      const waiting = Object.keys(entry.fiber.inject).filter((service) => entry.fiber!.ctx.get(service) === undefined)
      problems.push(`${label}: still waiting for ${waiting.join(', ')}`)
    } else if (entry.fiber.state !== FIBER_ACTIVE) {
      problems.push(`${label}: fiber state ${entry.fiber.state}`)
    }
  }
  if (problems.length) throw new Error(`cordis.yml did not start:\n${problems.join('\n')}\n${logged.join('\n')}`)
}

let loaderFiber: Fiber | undefined
let dir: string | undefined

async function start(yaml: string): Promise<Context> {
  dir = await mkdtemp(join(tmpdir(), 'dsh-tool-terminal-'))
  await writeFile(join(dir, 'cordis.yml'), yaml)
  const root = new Context()
  const logged: string[] = []
  root.logger.exporter({
    colors: 0,
    export: (message) => {
      if (message.type === 'error' || message.type === 'warn') logged.push(message.args.map(String).join(' '))
    },
  })
  root.baseUrl = `${pathToFileURL(dir).href}/`
  loaderFiber = await root.plugin(Loader)
  Object.assign(root.loader.builtins, PACKAGES, { include: ReadOnlyInclude })
  await root.loader.create({ name: 'cordis:include', config: { path: './cordis.yml' } })
  await requireAllActive(root.loader, logged)
  return root
}

afterEach(async () => {
  await loaderFiber?.dispose()
  loaderFiber = undefined
  if (dir) await rm(dir, { recursive: true, force: true })
  dir = undefined
  // Nothing the test started outlives it (children of this test process, zombies excluded).
  expect(children(process.pid).filter(isAlive)).toEqual([])
})

describe('the real composition from a cordis.yml', () => {
  it('mounts all nine plugins, and cd and export persist between two sends', async () => {
    const root = await start(COMPOSITION)
    expect(root.tools.list().map((tool) => tool.name)).toEqual([
      'job_kill',
      'job_list',
      'job_output',
      'terminal_close',
      'terminal_list',
      'terminal_open',
      'terminal_read',
      'terminal_send',
      'terminal_signal',
    ])
    const agent = await root.agents.create()
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

  it('fails loudly when an entry cannot start', async () => {
    const broken = COMPOSITION.replace('maxResultBytes: 65536', 'maxResultBytes: 10')
    await expect(start(broken)).rejects.toThrow(/terminal-tools \(dsh-tool-terminal\): invalid config:\s+- maxResultBytes must be at least 64 bytes/)
  })
})
