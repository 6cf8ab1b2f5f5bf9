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
        waitFor: { type: 'string', minLength: 1, maxLength: 2048, description: expect.stringContaining('(?i)ready') },
        timeoutMs: { type: 'integer', minimum: 1, maximum: 30_000, description: 'Longest this call waits, in ms (1 to 30000, the default). Implies wait.' },
        maxBytes: { type: 'integer', minimum: 64, maximum: 262_144, description: expect.stringContaining('keeps its head and tail') },
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
    expect(first.meta).toEqual({ jobId: 'pty-send-1', status: 'running', truncated: false, output: expect.objectContaining({ lines: 2, omittedLines: 0 }) })
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

  it('job_output keeps the head and the tail of long output around one line saying what was left out', async () => {
    const { root, agent } = await setup({ defaultMaxBytes: 1024 })
    const job = startJob(root, agent)
    for (let index = 1; index <= 2000; index++) job.write(`step ${index}\n`)
    job.write('BUILD FAILED: 3 errors\n')
    job.finish({ detail: 'exit 2' })
    await root.jobs.wait(job.id, agent)
    const result = await call(root, agent, 'job_output', { jobId: job.id })
    const text = textOf(result)
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1024)
    const lines = text.split('\n')
    expect(lines[0]).toBe('step 1')
    expect(lines.slice(-2)).toEqual(['BUILD FAILED: 3 errors', '[status: completed, exit 2]'])
    const elided = lines.filter((line) => /^\[… \d+ lines \([^)]+\) left out\]$/.test(line))
    expect(elided).toHaveLength(1)
    const count = Number(/\d+/.exec(elided[0]!)![0])
    // Head + elided + tail: every line of the output is accounted for exactly once.
    expect(lines.length - 2 + count).toBe(2001)
    expect(result.meta).toMatchObject({ truncated: true, output: { lines: 2001, omittedLines: count, foldedLines: 0 } })
  })

  it('job_output folds repeated lines, takes maxBytes per call, and refuses a maxBytes out of bounds', async () => {
    const { root, agent } = await setup({ maxResultBytes: 8192 })
    const job = startJob(root, agent)
    for (let index = 0; index < 300; index++) job.write('waiting for database...\n')
    job.write('ready\n')
    const folded = await call(root, agent, 'job_output', { jobId: job.id })
    expect(textOf(folded)).toMatch(/^waiting for database\.\.\.\n\[… 299 more identical lines\]\nready\n\[status: running, /)
    expect(folded.meta).toMatchObject({ truncated: false, output: { lines: 301, foldedLines: 299 } })
    for (let index = 0; index < 300; index++) job.write(`row ${index}\n`)
    const small = await call(root, agent, 'job_output', { jobId: job.id, maxBytes: 200 })
    expect(Buffer.byteLength(textOf(small))).toBeLessThanOrEqual(200)
    expect(textOf(small)).toMatch(/row 299\n\[status: running, /)
    for (const [maxBytes, message] of [
      [63, /maxBytes must be at least 64 bytes/],
      [8193, /maxBytes must be at most 8192 bytes \(maxResultBytes of dsh-tool-jobs\)/],
    ] as const) {
      const refused = await call(root, agent, 'job_output', { jobId: job.id, maxBytes })
      expect(refused.error?.code).toBe('INVALID_ARGUMENTS')
      expect(textOf(refused)).toMatch(message)
    }
    job.finish({ detail: 'exit 0' })
  })

  it('defaultMaxBytes above maxResultBytes is a config error', async () => {
    expect(() => toolJobsPlugin.Config.parse({ maxResultBytes: 4096, defaultMaxBytes: 8192 })).toThrow(
      /defaultMaxBytes \(8192\) must be at most maxResultBytes \(4096\)/,
    )
    expect(toolJobsPlugin.Config.parse({ maxResultBytes: 4096 }).defaultMaxBytes).toBe(4096)
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

  it('a plain wait answers as before: no [waited: …] line, no meta.waited', async () => {
    const { root, agent } = await setup()
    const job = startJob(root, agent)
    job.finish({ detail: 'exit 0' })
    const result = await call(root, agent, 'job_output', { jobId: job.id, wait: true })
    expect(textOf(result)).toBe('(no new output)\n[status: completed, exit 0]')
    expect(result.meta).toEqual({ jobId: 'pty-send-1', status: 'completed', truncated: false, output: expect.any(Object) })
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

describe('job_output waitFor and timeoutMs', () => {
  afterEach(async () => {
    for (const fiber of fibers.splice(0).reverse()) await fiber.dispose()
  })

  const RUNNING_STATUS = /\[status: running, \d+(\.\d)?m?s elapsed\]$/

  it('returns as soon as a new line matches, with the line; the job keeps running', async () => {
    const { root, agent } = await setup()
    const job = startJob(root, agent)
    const pending = call(root, agent, 'job_output', { jobId: job.id, waitFor: 'listening on :\\d+' })
    job.write('compiling\n')
    job.write('server listening on :8080\nGET /\n')
    const result = await pending
    const text = textOf(result)
    expect(text.slice(0, text.lastIndexOf('\n'))).toBe('compiling\nserver listening on :8080\nGET /\n[waited: match]\n[match: server listening on :8080]')
    expect(text).toMatch(RUNNING_STATUS)
    expect(result.meta).toEqual({
      jobId: 'pty-send-1',
      status: 'running',
      truncated: false,
      waited: 'match',
      match: { text: 'listening on :8080', line: 'server listening on :8080' },
      output: { bytes: 41, lines: 3, shownBytes: 41, foldedLines: 0, omittedLines: 0, omittedBytes: 0 },
    })
    expect(job.cancels()).toBe(0)
  })

  it('matches a line that arrives in pieces, and a line still in progress (a prompt)', async () => {
    const { root, agent } = await setup()
    const job = startJob(root, agent)
    const split = call(root, agent, 'job_output', { jobId: job.id, waitFor: '^ready$' })
    job.write('rea')
    job.write('dy\r\n')
    expect((await split).meta).toMatchObject({ waited: 'match', match: { line: 'ready' } })
    const prompt = call(root, agent, 'job_output', { jobId: job.id, waitFor: 'Password: $' })
    job.write('[sudo] Password: ')
    const asked = await prompt
    expect(asked.meta).toMatchObject({ waited: 'match', match: { text: 'Password: ', line: '[sudo] Password: ' } })
    expect(textOf(asked)).toMatch(/^\[sudo\] Password: \n\[waited: match\]\n\[match: \[sudo\] Password:\]\n/)
  })

  it('tests only output after the previous read', async () => {
    const { root, agent } = await setup()
    const job = startJob(root, agent)
    job.write('ready\n')
    expect(textOf(await call(root, agent, 'job_output', { jobId: job.id }))).toMatch(/^ready\n/)
    job.write('still ready?\n')
    const result = await call(root, agent, 'job_output', { jobId: job.id, waitFor: '^ready$', timeoutMs: 20 })
    expect(result.meta).toMatchObject({ waited: 'timeout', status: 'running' })
    expect(textOf(result)).toMatch(/^still ready\?\n\[waited: timeout after 20 ms, no match\]\n\[status: running, /)
  })

  it('says when the job ended without a match, with all of its new output', async () => {
    const { root, agent } = await setup()
    const job = startJob(root, agent)
    const pending = call(root, agent, 'job_output', { jobId: job.id, waitFor: 'ready' })
    job.write('error: port in use\n')
    job.finish({ detail: 'exit 1' })
    const result = await pending
    expect(textOf(result)).toBe('error: port in use\n[waited: finished, no match]\n[status: completed, exit 1]')
    expect(result.meta).toEqual({ jobId: 'pty-send-1', status: 'completed', truncated: false, waited: 'finished', output: expect.any(Object) })
    // A match in the job's last output is still a match.
    const other = startJob(root, agent)
    other.write('ready\n')
    other.finish({ detail: 'exit 0' })
    await root.jobs.wait(other.id, agent)
    expect((await call(root, agent, 'job_output', { jobId: other.id, waitFor: 'ready' })).meta).toMatchObject({ waited: 'match', status: 'completed' })
  })

  it('a cancelled call returns what it collected, as cancelled', async () => {
    const { root, agent } = await setup()
    const job = startJob(root, agent)
    const controller = new AbortController()
    const pending = call(root, agent, 'job_output', { jobId: job.id, waitFor: 'never' }, controller.signal)
    job.write('partial\n')
    controller.abort()
    const result = await pending
    expect(result.isError).toBe(false)
    expect(result.meta).toMatchObject({ waited: 'cancelled', status: 'running' })
    expect(textOf(result)).toMatch(/^partial\n\[waited: cancelled, no match\]\n\[status: running, /)
  })

  it('timeoutMs bounds a plain wait, and the result says how it ended', async () => {
    const { root, agent } = await setup()
    const job = startJob(root, agent)
    const bounded = await call(root, agent, 'job_output', { jobId: job.id, timeoutMs: 10 })
    expect(textOf(bounded)).toMatch(/^\(no new output\)\n\[waited: timeout after 10 ms\]\n\[status: running, /)
    expect(bounded.meta).toMatchObject({ waited: 'timeout' })
    const pending = call(root, agent, 'job_output', { jobId: job.id, wait: true, timeoutMs: 30_000 })
    job.write('done\n')
    job.finish({ detail: 'exit 0' })
    const finished = await pending
    expect(textOf(finished)).toBe('done\n[waited: finished]\n[status: completed, exit 0]')
    expect(finished.meta).toEqual({ jobId: 'pty-send-1', status: 'completed', truncated: false, waited: 'finished', output: expect.any(Object) })
  })

  it("keeps the collected output within the job's bound, with the matching line", async () => {
    const { root, agent } = await setup()
    const job = startJob(root, agent, { outputLimitBytes: 512 })
    const pending = call(root, agent, 'job_output', { jobId: job.id, waitFor: 'READY' })
    for (let index = 0; index < 100; index++) job.write(`noise ${index} ✓\n`)
    job.write(`READY ${'€'.repeat(100)}\n`)
    const result = await pending
    const text = textOf(result)
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(512)
    expect(text).not.toContain('\uFFFD')
    expect(result.meta).toMatchObject({ waited: 'match', truncated: true })
    expect(result.meta?.match).toEqual({ text: 'READY', line: `READY ${'€'.repeat(100)}` })
    // The shown line is cut to 200 bytes on a code-point boundary (the output above gave up its head first).
    expect(text).toMatch(/€\n\[waited: match\]\n\[match: READY €{63}…\]\n\[status: running, /)
  })

  it('refuses a bad pattern, a bound outside 1..maxWaitMs and wait: false, naming what is wrong', async () => {
    const { root, agent } = await setup({ maxWaitMs: 5000 })
    const job = startJob(root, agent)
    const refused = async (args: Record<string, unknown>) => {
      const result = await call(root, agent, 'job_output', { jobId: job.id, ...args })
      expect(result.error?.code).toBe('INVALID_ARGUMENTS')
      return result.error?.message.replace('invalid arguments for tool "job_output": ', '')
    }
    expect(await refused({ waitFor: '(ready' })).toBe('waitFor: waitFor "(ready" is not a valid regular expression (missing closing ): "(ready")')
    expect(await refused({ waitFor: '' })).toBe('waitFor: waitFor must not be empty: it would match the first line of output')
    expect(await refused({ timeoutMs: 0 })).toBe('timeoutMs: timeoutMs must be at least 1 ms')
    expect(await refused({ timeoutMs: 5001 })).toBe('timeoutMs: timeoutMs must be at most 5000 ms (maxWaitMs of dsh-tool-jobs)')
    expect(await refused({ timeoutMs: 2.5 })).toBe('timeoutMs: timeoutMs must be an integer number of milliseconds')
    expect(await refused({ wait: false, waitFor: 'x', timeoutMs: 5 })).toBe(
      'waitFor: waitFor applies to a wait; drop wait: false; timeoutMs: timeoutMs applies to a wait; drop wait: false',
    )
    // Nothing was read by a refused call.
    job.write('kept\n')
    expect(textOf(await call(root, agent, 'job_output', { jobId: job.id }))).toMatch(/^kept\n/)
  })

  it('refuses backtracking-only syntax as UNSUPPORTED_PATTERN before it waits or reads', async () => {
    const { root, agent } = await setup()
    const job = startJob(root, agent)
    job.write('ready\n')
    for (const [waitFor, named] of [
      ['(ab)\\1', 'a backreference'],
      ['x(?=y)', 'a lookahead'],
      ['(?<=port )\\d+', 'a lookbehind'],
    ] as const) {
      const result = await call(root, agent, 'job_output', { jobId: job.id, waitFor })
      expect(result.error?.code).toBe('UNSUPPORTED_PATTERN')
      const message = result.error?.message ?? ''
      expect([
        message.startsWith(`waitFor ${JSON.stringify(waitFor)} uses ${named} (`),
        message.includes('), which the linear-time matcher does not take; '),
      ]).toEqual([true, true])
    }
    // Nothing was read by a refused call.
    expect(textOf(await call(root, agent, 'job_output', { jobId: job.id }))).toMatch(/^ready\n/)
  })

  it('(a+)+$ against 100 000 a and a b holds nobody: another call is answered while the wait goes on, which then matches a later line', async () => {
    const { root, agent } = await setup()
    const job = startJob(root, agent, { outputLimitBytes: 262_144 })
    const settled: string[] = []
    const waiting = call(root, agent, 'job_output', { jobId: job.id, waitFor: '(a+)+$', maxBytes: 64 }).then((result) => {
      settled.push('wait')
      return result
    })
    job.write(`${'a'.repeat(100_000)}b\n`)
    // A RegExp would still be backtracking on that line here, and this call would never be answered.
    const listed = await call(root, agent, 'job_list')
    settled.push('list')
    expect(listed.isError).toBe(false)
    job.write('aaa\n')
    const result = await waiting
    expect(settled).toEqual(['list', 'wait'])
    // Lines are tested in order: the attack line was tested, did not match, and the next one did.
    expect(result.meta).toMatchObject({ waited: 'match', match: { text: 'aaa', line: 'aaa' }, output: { lines: 2 } })
  })

  it("another agent's job is an unknown job, waitFor or not", async () => {
    const { root, agent } = await setup()
    const stranger = await root.agents.create()
    const job = startJob(root, agent)
    const result = await call(root, stranger, 'job_output', { jobId: job.id, waitFor: 'x' })
    expect(result.error).toEqual({ code: 'UNKNOWN_JOB', message: 'unknown job pty-send-1' })
  })
})
