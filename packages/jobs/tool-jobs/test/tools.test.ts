import { Context, type Fiber } from '@deepseek-ai/cordis'
import * as agentPlugin from 'dsh-agent'
import type { Agent } from 'dsh-agent'
import * as jobsPlugin from 'dsh-jobs'
import type { JobHandle, JobOutcome, StartJobOptions } from 'dsh-jobs'
import * as toolJobsPlugin from 'dsh-tool-jobs'
import * as toolsPlugin from 'dsh-tools'
import { afterEach, describe, expect, it } from 'vitest'
import type { z } from 'zod'

const fibers: Fiber[] = []
let calls = 0

async function setup(config: z.input<typeof toolJobsPlugin.Config> = {}) {
  const root = new Context()
  for (const [plugin, options] of [[agentPlugin], [toolsPlugin], [jobsPlugin], [toolJobsPlugin, config]] as const) {
    fibers.push(await root.plugin(plugin, options))
  }
  const agent = await root.agents.create()
  return { root, agent }
}

/** A job the test ends by hand; cancelling it ends it, like a real job. */
function startJob(root: Context, owner: Agent, options: Partial<StartJobOptions> = {}) {
  let finish!: (outcome?: JobOutcome) => void
  let write!: (text: string) => void
  let cancels = 0
  const done = new Promise<JobOutcome | void>((resolve) => {
    finish = resolve
  })
  const id = root.jobs.start({
    kind: 'pty-send',
    label: 'pty-1: make test',
    owner,
    run: (job): JobHandle => {
      write = job.write
      return { cancel: () => (cancels++, finish()), done }
    },
    ...options,
  })
  return { id, finish, write: (text: string) => write(text), cancels: () => cancels }
}

function call(root: Context, agent: Agent | undefined, name: string, args: unknown = {}, signal?: AbortSignal) {
  return root.tools.execute({ callId: `call-${++calls}`, name, arguments: args, agent, signal })
}

const textOf = (result: { content: { text: string }[] }) => result.content.map((block) => block.text).join('\n')

describe('dsh-tool-jobs', () => {
  afterEach(async () => {
    for (const fiber of fibers.splice(0).reverse()) await fiber.dispose()
  })

  it('registers three strict tools and a guidance section', async () => {
    const { root } = await setup()
    const tools = root.tools.list()
    expect(tools.map((tool) => tool.name)).toEqual(['job_kill', 'job_list', 'job_output'])
    expect(tools[2]!.inputSchema).toEqual({
      type: 'object',
      properties: {
        jobId: { type: 'string', minLength: 1, description: 'Id of a job you started, e.g. pty-send-1' },
        wait: { type: 'boolean', description: 'Wait until the job finishes before reading (bounded by the host)' },
      },
      required: ['jobId'],
      additionalProperties: false,
    })
    expect(root.tools.renderGuidance()).toMatch(/^## Background jobs\nSome tools can run work in the background/)
  })

  it('job_output renders the new output, then "(no new output)", each with the status line', async () => {
    const { root, agent } = await setup()
    const job = startJob(root, agent)
    job.write('compiling\nlinking\n')
    const first = await call(root, agent, 'job_output', { jobId: job.id })
    expect(textOf(first)).toMatch(/^compiling\nlinking\n\[status: running, \d+(\.\d)?m?s elapsed\]$/)
    expect(first.meta).toEqual({ jobId: 'pty-send-1', status: 'running', truncated: false })
    expect(first.presentation).toMatchObject({ kind: 'read', title: 'output of job pty-send-1' })
    const second = await call(root, agent, 'job_output', { jobId: job.id })
    expect(textOf(second)).toMatch(/^\(no new output\)\n\[status: running, /)
    job.write('ok\n')
    job.finish({ detail: 'wait: stdin_read, session: running' })
    await root.jobs.wait(job.id, agent)
    const last = await call(root, agent, 'job_output', { jobId: job.id })
    expect(textOf(last)).toBe('ok\n[status: completed, wait: stdin_read, session: running]')
  })

  it("job_output is bounded to the job's outputLimitBytes, keeping the output's tail and the status line", async () => {
    const { root, agent } = await setup()
    const job = startJob(root, agent, { outputLimitBytes: 96 })
    for (let index = 0; index < 200; index++) job.write(`line ${index} ✓\n`)
    job.finish({ detail: 'exit 0' })
    await root.jobs.wait(job.id, agent)
    const result = await call(root, agent, 'job_output', { jobId: job.id })
    const text = textOf(result)
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(96)
    expect(text.endsWith('line 199 ✓\n[status: completed, exit 0]')).toBe(true)
    expect(text).not.toContain('\uFFFD')
    expect(result.meta).toMatchObject({ truncated: true })
  })

  it('job_output with wait blocks until the job ends and returns its final output', async () => {
    const { root, agent } = await setup()
    const job = startJob(root, agent)
    const pending = call(root, agent, 'job_output', { jobId: job.id, wait: true })
    job.write('all tests passed\n')
    job.finish({ detail: 'exit 0' })
    expect(textOf(await pending)).toBe('all tests passed\n[status: completed, exit 0]')
  })

  it('job_output with wait returns a running job once the bound passes or the call is cancelled', async () => {
    const { root, agent } = await setup({ maxWaitMs: 1 })
    const job = startJob(root, agent)
    const bounded = await call(root, agent, 'job_output', { jobId: job.id, wait: true })
    expect(textOf(bounded)).toMatch(/^\(no new output\)\n\[status: running, /)

    const unbounded = await setup({ maxWaitMs: 2 ** 31 - 1 })
    const other = startJob(unbounded.root, unbounded.agent)
    const controller = new AbortController()
    const pending = call(unbounded.root, unbounded.agent, 'job_output', { jobId: other.id, wait: true }, controller.signal)
    controller.abort()
    const cancelled = await pending
    expect(cancelled.isError).toBe(false)
    expect(textOf(cancelled)).toMatch(/^\(no new output\)\n\[status: running, /)
  })

  it('job_kill requests cancellation and the job then reports killed', async () => {
    const { root, agent } = await setup()
    const job = startJob(root, agent)
    const result = await call(root, agent, 'job_kill', { jobId: job.id })
    expect(textOf(result)).toBe('requested cancellation of job pty-send-1')
    expect(result.presentation).toMatchObject({ kind: 'execute', title: 'kill job pty-send-1' })
    expect(job.cancels()).toBe(1)
    await root.jobs.wait(job.id, agent)
    expect(textOf(await call(root, agent, 'job_output', { jobId: job.id }))).toBe('(no new output)\n[status: killed, cancelled by job_kill]')
    expect(textOf(await call(root, agent, 'job_kill', { jobId: job.id }))).toBe('job pty-send-1 has already finished [status: killed, cancelled by job_kill]')
    expect(job.cancels()).toBe(1)
  })

  it('job_list renders one line per job, each label on one line', async () => {
    const { root, agent } = await setup()
    expect(textOf(await call(root, agent, 'job_list'))).toBe('(no jobs)')
    const first = startJob(root, agent, { label: 'pty-1: printf "a\nb"' })
    const second = startJob(root, agent, { kind: 'fetch', label: `GET ${'x'.repeat(300)}` })
    first.finish({ detail: 'exit 0' })
    await root.jobs.wait(first.id, agent)
    const lines = textOf(await call(root, agent, 'job_list')).split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toBe('pty-send-1 [completed, exit 0] pty-1: printf "a b"')
    expect(lines[1]).toMatch(/^fetch-1 \[running, .* elapsed\] GET x+…$/)
    expect(second.cancels()).toBe(0)
  })

  it("another agent's job id is an unknown job", async () => {
    const { root, agent } = await setup()
    const stranger = await root.agents.create()
    const job = startJob(root, agent)
    for (const name of ['job_output', 'job_kill']) {
      const result = await call(root, stranger, name, { jobId: job.id })
      expect(result.isError).toBe(true)
      expect(result.error).toEqual({ code: 'UNKNOWN_JOB', message: 'unknown job pty-send-1' })
      expect(textOf(result)).toBe('Error: unknown job pty-send-1')
    }
    expect(textOf(await call(root, stranger, 'job_list'))).toBe('(no jobs)')
    expect(job.cancels()).toBe(0)
  })

  it('refuses bad input: missing or empty jobId, extra keys, no agent', async () => {
    const { root, agent } = await setup()
    const missing = await call(root, agent, 'job_output', {})
    expect(missing.error?.code).toBe('INVALID_ARGUMENTS')
    expect(missing.error?.message).toBe('invalid arguments for tool "job_output": jobId: Invalid input: expected string, received undefined')
    const empty = await call(root, agent, 'job_kill', { jobId: '' })
    expect(empty.error?.message).toMatch(/^invalid arguments for tool "job_kill": jobId: /)
    const extra = await call(root, agent, 'job_list', { all: true })
    expect(extra.error?.message).toBe('invalid arguments for tool "job_list": arguments: Unrecognized key: "all"')
    const anonymous = await call(root, undefined, 'job_list')
    expect(anonymous.error?.code).toBe('NO_AGENT')
  })

  it('caps every result at maxResultBytes, errors included', async () => {
    const { root, agent } = await setup({ maxResultBytes: 64 })
    const result = await call(root, agent, 'job_output', { jobId: `pty-send-${'9'.repeat(200)}` })
    expect(result.error?.code).toBe('UNKNOWN_JOB')
    expect(Buffer.byteLength(textOf(result))).toBeLessThanOrEqual(64)
  })

  it('the tools and guidance vanish when dsh-tool-jobs unloads', async () => {
    const { root } = await setup()
    await fibers.pop()!.dispose()
    expect(root.tools.list()).toEqual([])
    expect(root.tools.renderGuidance()).toBe('')
  })
})
