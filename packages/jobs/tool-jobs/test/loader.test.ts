import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Context, type Fiber } from '@deepseek-ai/cordis'
import Include from '@deepseek-ai/cordis-plugin-include'
import Loader from '@deepseek-ai/cordis-plugin-loader'
import * as agentPlugin from 'dsh-agent'
import * as jobsPlugin from 'dsh-jobs'
import * as toolJobsPlugin from 'dsh-tool-jobs'
import * as toolsPlugin from 'dsh-tools'
import { afterEach, describe, expect, it } from 'vitest'

/** Fiber states (a const enum in Cordis, so not importable at runtime). */
const PENDING = 0
const ACTIVE = 2
const STATE_NAMES = ['pending', 'loading', 'active', 'failed', 'disposed', 'unloading']

/** The packages a cordis.yml may name, registered as loader builtins so no module resolution is involved. */
const BUILTINS: Record<string, unknown> = {
  'dsh-agent': agentPlugin,
  'dsh-tools': toolsPlugin,
  'dsh-jobs': jobsPlugin,
  'dsh-tool-jobs': toolJobsPlugin,
}

/** Include over a file the test owns: never written back, and package names resolve to builtins first. */
class TestInclude extends Include {
  override write(): void {}

  override import(name: string, getOuterStack?: () => string[]) {
    return this.ctx.loader.builtins[name] ?? super.import(name, getOuterStack)
  }
}

/**
 * Await every loader entry and throw one error listing each enabled entry that is not active: a
 * module that did not import, a config or apply that failed, or a plugin still waiting for services.
 * The loader itself only logs such failures; `logged` adds what it logged to the message.
 */
async function assertStarted(loader: Loader, logged: readonly string[]): Promise<void> {
  await loader.await()
  const failures: string[] = []
  for (const entry of loader.entries()) {
    if (entry.disabled) continue
    const label = `${entry.options.id} (${entry.options.name})`
    const fiber = entry.fiber
    if (!fiber) {
      failures.push(`${label}: module did not load`)
      continue
    }
    try {
      await fiber.await()
    } catch (error) {
      failures.push(`${label}: ${error instanceof Error ? error.message : String(error)}`)
      continue
    }
    if (fiber.state === PENDING) {
      const missing = Object.keys(fiber.inject).filter((name) => fiber.ctx.get(name) === undefined)
      failures.push(`${label}: waiting for services ${missing.join(', ')}`)
    } else if (fiber.state !== ACTIVE) {
      failures.push(`${label}: ${STATE_NAMES[fiber.state] ?? fiber.state}`)
    }
  }
  if (failures.length) {
    const log = logged.length ? `\nloader log:\n${logged.join('\n')}` : ''
    throw new Error(`cordis.yml did not start:\n${failures.join('\n')}${log}`)
  }
}

let loaderFiber: Fiber | undefined
const dirs: string[] = []

/** Write `yaml` to a temp cordis.yml, mount it through the loader, and assert every entry started. */
async function startFromYaml(yaml: string): Promise<{ root: Context; file: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'dsh-loader-'))
  dirs.push(dir)
  const file = join(dir, 'cordis.yml')
  await writeFile(file, yaml)
  const root = new Context()
  const logged: string[] = []
  root.logger.exporter({
    colors: 0,
    export: (message) => {
      if (message.type !== 'error' && message.type !== 'warn') return
      logged.push(message.args.map((arg) => (arg instanceof Error ? arg.message : String(arg))).join(' '))
    },
  })
  root.baseUrl = `${pathToFileURL(dir).href}/`
  loaderFiber = await root.plugin(Loader)
  Object.assign(root.loader.builtins, BUILTINS, { include: TestInclude })
  await root.loader.create({ name: 'cordis:include', config: { path: './cordis.yml' } })
  await assertStarted(root.loader, logged)
  return { root, file }
}

const COMPOSITION = `
# The job spine, mounted by package name.
- id: agents
  name: dsh-agent
- id: tools
  name: dsh-tools
- id: jobs
  name: dsh-jobs
  config:
    maxActiveJobsPerOwner: 1
    defaultOutputLimitBytes: 4096
- id: job-tools
  name: dsh-tool-jobs
  config:
    maxWaitMs: 10000
`

describe('loader composition', () => {
  afterEach(async () => {
    await loaderFiber?.dispose()
    loaderFiber = undefined
    await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
  })

  it('mounts the plugins by name with config, and a tool call runs through ctx.tools.execute', async () => {
    const { root } = await startFromYaml(COMPOSITION)
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
    // The yml's config reached dsh-jobs: one running job per owner, 4096-byte default bound.
    expect(() => root.jobs.start({ kind: 'build', label: 'again', owner: agent, run: () => ({ cancel() {}, done: Promise.resolve() }) })).toThrow(/limit 1/)
    expect(root.jobs.get(id, agent)?.outputLimitBytes).toBe(4096)
    const pending = root.tools.execute({ callId: 'c1', name: 'job_output', arguments: { jobId: id, wait: true }, agent })
    finish({ detail: 'exit 0' })
    const result = await pending
    expect(result.content).toEqual([{ type: 'text', text: 'built\n[status: completed, exit 0]' }])
    await agent.dispose()
  })

  it('fails loudly when an entry has a bad config, and leaves the file alone', async () => {
    const yaml = COMPOSITION.replace('maxActiveJobsPerOwner: 1', 'maxActiveJobsPerOwner: 0')
    const failure = await startFromYaml(yaml).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(Error)
    expect((failure as Error).message).toMatch(/^cordis.yml did not start:\njobs \(dsh-jobs\): invalid config:.*\(at maxActiveJobsPerOwner\)/s)
    // The consumer of the failed service is reported too, rather than silently pending.
    expect((failure as Error).message).toContain('job-tools (dsh-tool-jobs): waiting for services jobs')
    expect(await readFile(join(dirs[0]!, 'cordis.yml'), 'utf8')).toBe(yaml)
  })

  it('fails loudly when an entry names a module that does not exist', async () => {
    const yaml = `${COMPOSITION}- id: ghost\n  name: ./no-such-plugin.js\n`
    await expect(startFromYaml(yaml)).rejects.toThrow(/ghost \(\.\/no-such-plugin\.js\): module did not load\nloader log:\n.*no-such-plugin/s)
  })

  it('fails loudly when a plugin is missing a service it injects', async () => {
    const yaml = COMPOSITION.replace(/- id: jobs\n {2}name: dsh-jobs\n {2}config:\n( {4}.*\n)+/, '')
    await expect(startFromYaml(yaml)).rejects.toThrow(/job-tools \(dsh-tool-jobs\): waiting for services jobs$/)
  })

  it('does not count a disabled entry as a failure', async () => {
    const { root } = await startFromYaml(`${COMPOSITION}- id: off\n  name: ./no-such-plugin.js\n  disabled: true\n`)
    expect(root.tools.list()).toHaveLength(3)
  })
})
