import { readdir, readFile, writeFile } from 'node:fs/promises'
import { realpathSync } from 'node:fs'
import { join } from 'node:path'
import type { SandboxPolicyService } from 'dsh-sandbox-policy'
import type { TerminalSessionService } from 'dsh-terminal'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { type Composition, CompositionError } from '../src/compose/load-config'
import { ALL_TOOLS, DANGER_CONFIG, DEFAULT_CONFIG, load, READ_ONLY_CONFIG, SNAPSHOT_CONFIG, tempDir } from './helpers'

const SPINE = `# A comment the host must never lose.
- id: agents
  name: dsh-agent
- id: tools
  name: dsh-tools
- id: jobs
  name: dsh-jobs
  config:
    maxActiveJobsPerOwner: 2
- id: job-tools
  name: dsh-tool-jobs
`

const opened: Composition[] = []
const cleanups: (() => Promise<void>)[] = []

async function mount(configPath: string, log?: string[]): Promise<Composition> {
  const composition = await load(configPath, log)
  opened.push(composition)
  return composition
}

/** Write `yaml` as cordis.yml in a fresh directory outside the repository (no node_modules near it). */
async function writeConfig(yaml: string, file = 'cordis.yml'): Promise<string> {
  const { dir, remove } = await tempDir('dsh-host-config-')
  cleanups.push(remove)
  await writeFile(join(dir, file), yaml)
  return join(dir, file)
}

async function failureOf(configPath: string): Promise<CompositionError> {
  const error = await mount(configPath).then(
    () => undefined,
    (thrown: unknown) => thrown,
  )
  expect(error).toBeInstanceOf(CompositionError)
  return error as CompositionError
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((composition) => composition.dispose()))
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()))
})

describe('an entry gets its config from the yml', () => {
  it('the job limits written in cordis.yml hold, and a job tool call runs through ctx.tools', async () => {
    const composition = await mount(await writeConfig(SPINE.replace('maxActiveJobsPerOwner: 2', 'maxActiveJobsPerOwner: 1\n    defaultOutputLimitBytes: 4096')))
    const { root } = composition
    expect(root.tools.list().map((tool) => tool.name)).toEqual(['job_kill', 'job_list', 'job_output'])
    const agent = await root.agents.create()
    let finish!: (outcome: { detail: string }) => void
    const id = root.jobs.start({
      kind: 'build',
      label: 'make',
      owner: agent,
      run: (job) => {
        job.write('built\n')
        return { cancel: () => finish({ detail: 'cancelled' }), done: new Promise((resolve) => (finish = resolve)) }
      },
    })
    expect(() => root.jobs.start({ kind: 'build', label: 'again', owner: agent, run: () => ({ cancel() {}, done: Promise.resolve() }) })).toThrow(/limit 1/)
    expect(root.jobs.get(id, agent)?.outputLimitBytes).toBe(4096)
    const pending = root.tools.execute({ callId: 'c1', name: 'job_output', arguments: { jobId: id, wait: true }, agent })
    finish({ detail: 'exit 0' })
    expect((await pending).content).toEqual([{ type: 'text', text: 'built\n[status: completed, exit 0]' }])
    await agent.dispose()
  })
})

describe('the default composition and its overlays', () => {
  it('mounts every entry of cordis.yml: nine tools, workspace-write over the working directory', async () => {
    const composition = await mount(DEFAULT_CONFIG)
    expect(composition.tools.list().map((tool) => tool.name)).toEqual(ALL_TOOLS)
    const policy = composition.root.get('sandboxPolicy') as SandboxPolicyService
    expect(policy.defaultMode).toBe('workspace-write')
    expect(policy.workspaceRoot).toBe(realpathSync(process.cwd()))
    expect(composition.root.get('sandbox')).toBeDefined()
    expect((composition.root.get('terminals') as TerminalSessionService).listBackends()).toEqual(['shell'])
  })

  it('read-only overlay: the same composition with the read-only default mode', async () => {
    const composition = await mount(READ_ONLY_CONFIG)
    expect((composition.root.get('sandboxPolicy') as SandboxPolicyService).defaultMode).toBe('read-only')
    expect(composition.tools.list()).toHaveLength(ALL_TOOLS.length)
  })

  it('danger-full-access overlay: unconfined mode and no sandbox provider mounted', async () => {
    const composition = await mount(DANGER_CONFIG)
    expect((composition.root.get('sandboxPolicy') as SandboxPolicyService).defaultMode).toBe('danger-full-access')
    expect(composition.root.get('sandbox')).toBeUndefined()
    expect((composition.root.get('terminals') as TerminalSessionService).listBackends()).toEqual(['shell'])
  })

  it('snapshot overlay: only the in-memory backend, no process provider, sandbox or policy', async () => {
    const composition = await mount(SNAPSHOT_CONFIG)
    expect((composition.root.get('terminals') as TerminalSessionService).listBackends()).toEqual(['snapshot'])
    for (const service of ['subprocess', 'sandbox', 'sandboxPolicy']) expect(composition.root.get(service)).toBeUndefined()
    expect(composition.tools.list().map((tool) => tool.name)).toEqual(ALL_TOOLS)
  })
})

describe('loading fails loudly', () => {
  it('names an entry whose config is invalid, and the consumer left waiting for its service', async () => {
    const error = await failureOf(await writeConfig(SPINE.replace('maxActiveJobsPerOwner: 2', 'maxActiveJobsPerOwner: 0')))
    expect(error.failures[0]).toMatch(/^jobs \(dsh-jobs\): invalid config:.*maxActiveJobsPerOwner/s)
    expect(error.failures).toContain('job-tools (dsh-tool-jobs): waiting for services jobs')
    expect(error.message).toMatch(/cordis\.yml did not start:\n {2}jobs \(dsh-jobs\)/)
  })

  it('names an entry whose module does not exist, by path or by package name', async () => {
    const error = await failureOf(await writeConfig(`${SPINE}- id: ghost\n  name: ./no-such-plugin.js\n- id: typo\n  name: dsh-termnal\n`))
    expect(error.failures).toEqual(['ghost (./no-such-plugin.js): module did not load', 'typo (dsh-termnal): module did not load'])
    expect(error.message).toContain('no-such-plugin')
  })

  it('names a plugin whose service dependency is not mounted', async () => {
    const error = await failureOf(await writeConfig(`${SPINE}- id: terminal-tools\n  name: dsh-tool-terminal\n`))
    expect(error.failures).toEqual(['terminal-tools (dsh-tool-terminal): waiting for services terminals'])
  })

  it('rejects an overlay patch that matches no entry instead of silently running the base', async () => {
    const overlay = `- id: base\n  name: cordis:include\n  config:\n    path: ${JSON.stringify(DEFAULT_CONFIG)}\n    patches:\n      - id: sandbox-polcy\n        config: { mode: read-only }\n`
    const error = await failureOf(await writeConfig(overlay))
    expect(error.failures).toEqual([expect.stringMatching(/^rejected overlay: patch: entry sandbox-polcy not found/)])
  })

  it('refuses a missing file, a file that is not an entry list, and a composition without tools', async () => {
    expect((await failureOf('/nonexistent/cordis.yml')).failures).toEqual(['no such config file: /nonexistent/cordis.yml'])
    const notAList = await failureOf(await writeConfig('plugins:\n  dsh-agent: {}\n'))
    expect(notAList.failures[0]).toMatch(/config file must be a top-level array of entries/)
    const noTools = await failureOf(await writeConfig('- id: agents\n  name: dsh-agent\n'))
    expect(noTools.failures).toEqual(['no entry provides ctx.tools: mount dsh-tools'])
  })
})

describe('the host never writes the file', () => {
  it('keeps cordis.yml byte for byte when an entry updates its config or disposes itself', async () => {
    const file = await writeConfig(SPINE)
    const composition = await mount(file)
    const entries = [...composition.root.loader.entries()]
    const jobs = entries.find((entry) => entry.options.id === 'jobs')!
    const jobTools = entries.find((entry) => entry.options.id === 'job-tools')!
    const write = vi.spyOn(jobs.parent.tree, 'write')
    // Both make the stock include rewrite the file (the new config; `disabled: true` for the
    // self-dispose). Its writes are deferred and flushed when the include stops, so unload first.
    jobs.fiber!.update({ maxActiveJobsPerOwner: 5 })
    await jobTools.fiber!.dispose()
    await composition.root.loader.await()
    await composition.dispose()
    expect(write).toHaveBeenCalled()
    expect(await readFile(file, 'utf8')).toBe(SPINE)
    expect(await readdir(join(file, '..'))).toEqual(['cordis.yml'])
  })

  it('resolves family package names from a folder with no node_modules anywhere near it', async () => {
    const file = await writeConfig(SPINE)
    const composition = await mount(file)
    expect(composition.tools.list().map((tool) => tool.name)).toEqual(['job_kill', 'job_list', 'job_output'])
  })
})
