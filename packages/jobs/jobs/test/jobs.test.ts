import { Context, type Fiber } from '@deepseek-ai/cordis'
import * as agentPlugin from 'dsh-agent'
import { Agent } from 'dsh-agent'
import * as jobsPlugin from 'dsh-jobs'
import { JobError, type JobInfo } from 'dsh-jobs'
import { afterEach, describe, expect, it } from 'vitest'
import type { z } from 'zod'
import { fakeJob } from './fake'

let fibers: Fiber[] = []

async function setup(config: z.input<typeof jobsPlugin.Config> = {}) {
  const root = new Context()
  fibers = [await root.plugin(agentPlugin), await root.plugin(jobsPlugin, config)]
  const agent = await root.agents.create()
  return { root, agent }
}

function codeOf(action: () => unknown): string | undefined {
  try {
    action()
  } catch (error) {
    return error instanceof JobError ? error.code : `not a JobError: ${String(error)}`
  }
  return undefined
}

const statusOf = (jobs: JobInfo[]) => jobs.map((job) => `${job.id} ${job.status}`)

describe('ctx.jobs', () => {
  afterEach(async () => {
    for (const fiber of fibers.reverse()) await fiber.dispose()
    fibers = []
  })

  it('returns <kind>-<n> synchronously, counted per kind, and calls run once with the id', async () => {
    const { root, agent } = await setup()
    const a = fakeJob()
    const ids = [
      root.jobs.start({ kind: 'pty-send', label: 'pty-1: make', owner: agent, run: a.run }),
      root.jobs.start({ kind: 'pty-send', label: 'pty-1: ls', owner: agent, run: fakeJob().run }),
      root.jobs.start({ kind: 'fetch', label: 'GET /', owner: agent, run: fakeJob().run }),
    ]
    expect(ids).toEqual(['pty-send-1', 'pty-send-2', 'fetch-1'])
    expect(a.runs()).toBe(1)
    expect(a.context().id).toBe('pty-send-1')
    const info = root.jobs.get('pty-send-1', agent)
    expect(info).toMatchObject({
      id: 'pty-send-1',
      kind: 'pty-send',
      label: 'pty-1: make',
      status: 'running',
      cancelRequested: false,
      outputLimitBytes: 262_144,
    })
    expect(info?.owner === agent).toBe(true)
    expect(info?.detail).toMatch(/^\d+(\.\d)?m?s elapsed$/)
    expect(statusOf(root.jobs.list(agent))).toEqual(['pty-send-1 running', 'pty-send-2 running', 'fetch-1 running'])
  })

  it('when run throws, the error reaches the caller and nothing is registered', async () => {
    const { root, agent } = await setup()
    const settled: string[] = []
    root.jobs.onSettled((job) => settled.push(job.id))
    const failure = new Error('SEND_ACTIVE: pty-1 is busy')
    let caught: unknown
    try {
      root.jobs.start({
        kind: 'pty-send',
        label: 'x',
        owner: agent,
        run: () => {
          throw failure
        },
      })
    } catch (error) {
      caught = error
    }
    expect(caught === failure).toBe(true)
    expect(root.jobs.list(agent)).toEqual([])
    expect(root.jobs.get('pty-send-1', agent)).toBeUndefined()
    expect(agent.scope.fiber.getEffects().map((effect) => effect.label)).not.toContain('jobs: cancel and await owned jobs')
    // A failed start still consumes its number, so an id is never reused.
    expect(root.jobs.start({ kind: 'pty-send', label: 'y', owner: agent, run: fakeJob().run })).toBe('pty-send-2')
    expect(settled).toEqual([])
  })

  it('refuses a malformed start with INVALID_JOB before calling run', async () => {
    const { root, agent } = await setup()
    const job = fakeJob()
    const base = { kind: 'k', label: 'l', owner: agent, run: job.run }
    expect(codeOf(() => root.jobs.start({ ...base, kind: 'bad kind' }))).toBe('INVALID_JOB')
    expect(codeOf(() => root.jobs.start({ ...base, kind: '' }))).toBe('INVALID_JOB')
    expect(codeOf(() => root.jobs.start({ ...base, outputLimitBytes: 10 }))).toBe('INVALID_JOB')
    expect(codeOf(() => root.jobs.start({ ...base, outputLimitBytes: 1.5e3 + 0.5 }))).toBe('INVALID_JOB')
    expect(codeOf(() => root.jobs.start({ ...base, owner: { id: 'agent-1' } as Agent }))).toBe('INVALID_JOB')
    expect(job.runs()).toBe(0)
    let cancelled = 0
    const bad = () => ({ cancel: () => void cancelled++, done: 'soon' }) as never
    expect(codeOf(() => root.jobs.start({ ...base, run: bad }))).toBe('INVALID_JOB')
    expect(cancelled).toBe(1)
    expect(root.jobs.list(agent)).toEqual([])
  })

  it('limits running jobs per owner, per owner only, and frees a slot when one ends', async () => {
    const { root, agent } = await setup({ maxActiveJobsPerOwner: 2 })
    const other = await root.agents.create()
    const first = fakeJob()
    root.jobs.start({ kind: 'k', label: '1', owner: agent, run: first.run })
    root.jobs.start({ kind: 'k', label: '2', owner: agent, run: fakeJob().run })
    const refused = fakeJob()
    let error: unknown
    try {
      root.jobs.start({ kind: 'k', label: '3', owner: agent, run: refused.run })
    } catch (caught) {
      error = caught
    }
    expect((error as JobError).code).toBe('JOB_LIMIT')
    expect((error as JobError).message).toBe(`agent ${agent.id} already has 2 running jobs (limit 2); wait for one to finish or kill one with job_kill`)
    expect(refused.runs()).toBe(0)
    expect(root.jobs.start({ kind: 'k', label: 'other', owner: other, run: fakeJob().run })).toBe('k-3')
    first.finish()
    await root.jobs.wait('k-1', agent)
    expect(root.jobs.start({ kind: 'k', label: '4', owner: agent, run: fakeJob().run })).toBe('k-4')
  })

  it('refuses a job for an owner that has ended', async () => {
    const { root, agent } = await setup()
    await agent.dispose()
    expect(codeOf(() => root.jobs.start({ kind: 'k', label: 'l', owner: agent, run: fakeJob().run }))).toBe('OWNER_ENDED')
  })

  it('cancels the job and refuses it when the owner ends while run is starting it', async () => {
    const { root, agent } = await setup()
    const job = fakeJob()
    let disposal: Promise<void> | undefined
    const code = codeOf(() =>
      root.jobs.start({
        kind: 'k',
        label: 'l',
        owner: agent,
        run: (context) => {
          disposal = agent.dispose()
          return job.run(context)
        },
      }),
    )
    expect(code).toBe('OWNER_ENDED')
    expect(job.cancels()).toBe(1)
    await disposal
    expect(root.jobs.list(agent)).toEqual([])
  })

  it('records completion, explicit outcomes, and turns a rejection into failed', async () => {
    const { root, agent } = await setup()
    const plain = fakeJob()
    const explicit = fakeJob()
    const rejected = fakeJob()
    root.jobs.start({ kind: 'k', label: 'plain', owner: agent, run: plain.run })
    root.jobs.start({ kind: 'k', label: 'explicit', owner: agent, run: explicit.run })
    root.jobs.start({ kind: 'k', label: 'rejected', owner: agent, run: rejected.run })
    plain.finish()
    explicit.finish({ status: 'failed', detail: 'exit code 2' })
    rejected.fail(new Error('pty closed'))
    const [a, b, c] = await Promise.all(['k-1', 'k-2', 'k-3'].map((id) => root.jobs.wait(id, agent)))
    expect(a).toMatchObject({ status: 'completed' })
    expect(a?.detail).toMatch(/^finished after \d/)
    expect(a?.endedAt).toBeGreaterThanOrEqual(a!.startedAt)
    expect(b).toMatchObject({ status: 'failed', detail: 'exit code 2' })
    expect(c).toMatchObject({ status: 'failed', detail: 'pty closed' })
  })

  it('kill requests cancellation once and the job ends as killed', async () => {
    const { root, agent } = await setup()
    const job = fakeJob({ onCancel: () => {} })
    root.jobs.start({ kind: 'k', label: 'l', owner: agent, run: job.run })
    const first = root.jobs.kill('k-1', agent, 'cancelled by job_kill')
    expect(first).toMatchObject({ status: 'running', cancelRequested: true })
    expect(first.detail).toMatch(/elapsed, cancellation requested \(cancelled by job_kill\)$/)
    root.jobs.kill('k-1', agent, 'again')
    expect(job.cancels()).toBe(1)
    job.finish()
    expect(await root.jobs.wait('k-1', agent)).toMatchObject({ status: 'killed', detail: 'cancelled by job_kill' })
    expect(root.jobs.kill('k-1', agent).status).toBe('killed')
    expect(job.cancels()).toBe(1)
  })

  it('a rejection after a kill is killed, and a synchronous cancel failure reaches the caller', async () => {
    const { root, agent } = await setup()
    const aborted = fakeJob({ onCancel: (self) => self.fail(new Error('AbortError')) })
    root.jobs.start({ kind: 'k', label: 'l', owner: agent, run: aborted.run })
    root.jobs.kill('k-1', agent)
    expect(await root.jobs.wait('k-1', agent)).toMatchObject({ status: 'killed', detail: 'cancelled on request' })

    let fail = true
    const stubborn = fakeJob({
      onCancel: () => {
        if (fail) throw new Error('cannot signal')
      },
    })
    root.jobs.start({ kind: 'k', label: 'l', owner: agent, run: stubborn.run })
    expect(() => root.jobs.kill('k-2', agent)).toThrow('cannot signal')
    expect(root.jobs.get('k-2', agent)?.cancelRequested).toBe(false)
    fail = false
    root.jobs.kill('k-2', agent)
    expect(stubborn.cancels()).toBe(2)
    stubborn.finish()
  })

  it('another owner, even a look-alike with the same id, sees an unknown job', async () => {
    const { root, agent } = await setup()
    const other = await root.agents.create()
    const fiber = root.plugin({ name: 'look-alike', apply: () => {} })
    await fiber
    const lookAlike = new Agent(agent.id, fiber)
    const job = fakeJob()
    root.jobs.start({ kind: 'k', label: 'mine', owner: agent, run: job.run })
    for (const stranger of [other, lookAlike]) {
      expect(root.jobs.get('k-1', stranger)).toBeUndefined()
      expect(root.jobs.list(stranger)).toEqual([])
      expect(codeOf(() => root.jobs.read('k-1', stranger))).toBe('UNKNOWN_JOB')
      expect(codeOf(() => root.jobs.kill('k-1', stranger))).toBe('UNKNOWN_JOB')
      await expect(root.jobs.wait('k-1', stranger)).rejects.toMatchObject({ code: 'UNKNOWN_JOB', message: 'unknown job k-1' })
    }
    expect(job.cancels()).toBe(0)
    expect(codeOf(() => root.jobs.read('nope-1', agent))).toBe('UNKNOWN_JOB')
  })

  it('owner disposal cancels its running jobs and awaits them, leaving other owners alone', async () => {
    const { root, agent } = await setup()
    const bystander = await root.agents.create()
    const settled: JobInfo[] = []
    root.jobs.onSettled((job) => settled.push(job))
    const running = fakeJob({ onCancel: () => {} })
    const finished = fakeJob()
    const theirs = fakeJob()
    root.jobs.start({ kind: 'k', label: 'running', owner: agent, run: running.run })
    root.jobs.start({ kind: 'k', label: 'finished', owner: agent, run: finished.run })
    root.jobs.start({ kind: 'k', label: 'theirs', owner: bystander, run: theirs.run })
    finished.finish()
    await root.jobs.wait('k-2', agent)

    let disposed = false
    const disposal = agent.dispose().then(() => {
      disposed = true
    })
    await running.cancelled
    // The job has not ended yet, so the agent's disposal must still be waiting for it.
    expect(disposed).toBe(false)
    running.finish()
    await disposal
    expect(settled.map((job) => `${job.id} ${job.status} ${job.detail}`)).toEqual([
      expect.stringMatching(/^k-2 completed finished after/),
      'k-1 killed cancelled because its owner ended',
    ])
    expect(finished.cancels()).toBe(0)
    expect(theirs.cancels()).toBe(0)
    expect(root.jobs.list(agent)).toEqual([])
    expect(statusOf(root.jobs.list(bystander))).toEqual(['k-3 running'])
  })

  it('unloading dsh-jobs cancels and awaits every job', async () => {
    const { root, agent } = await setup()
    const job = fakeJob()
    root.jobs.start({ kind: 'k', label: 'l', owner: agent, run: job.run })
    const settled: JobInfo[] = []
    root.jobs.onSettled((info) => settled.push(info))
    await fibers.pop()!.dispose()
    expect(job.cancels()).toBe(1)
    expect(settled.map((info) => `${info.status}: ${info.detail}`)).toEqual(['killed: cancelled because the job registry stopped'])
    // The owner can still end cleanly afterwards.
    await agent.dispose()
  })

  it('fires each settle listener exactly once per job, and a throwing listener does not stop the others', async () => {
    const { root, agent } = await setup()
    const seen: string[] = []
    root.jobs.onSettled(() => {
      throw new Error('listener bug')
    })
    root.jobs.onSettled((job) => seen.push(`${job.id}:${job.status}`))
    const job = fakeJob()
    root.jobs.start({ kind: 'k', label: 'l', owner: agent, run: job.run })
    root.jobs.kill('k-1', agent)
    root.jobs.kill('k-1', agent)
    await root.jobs.wait('k-1', agent)
    job.fail(new Error('late rejection is ignored'))
    await root.jobs.wait('k-1', agent)
    expect(seen).toEqual(['k-1:killed'])
  })

  it("a plugin's settle listener ends with the plugin", async () => {
    const { root, agent } = await setup()
    const seen: string[] = []
    const listener = await root.plugin({
      name: 'listener',
      inject: ['jobs'],
      apply: (ctx: Context) => void ctx.jobs.onSettled((job) => seen.push(job.id)),
    })
    const a = fakeJob()
    const b = fakeJob()
    root.jobs.start({ kind: 'k', label: 'a', owner: agent, run: a.run })
    root.jobs.start({ kind: 'k', label: 'b', owner: agent, run: b.run })
    a.finish()
    await root.jobs.wait('k-1', agent)
    await listener.dispose()
    b.finish()
    await root.jobs.wait('k-2', agent)
    expect(seen).toEqual(['k-1'])
  })

  it('wait returns at once for an aborted signal and resolves when the job ends', async () => {
    const { root, agent } = await setup()
    const job = fakeJob()
    root.jobs.start({ kind: 'k', label: 'l', owner: agent, run: job.run })
    const controller = new AbortController()
    const waiting = root.jobs.wait('k-1', agent, controller.signal)
    controller.abort()
    expect((await waiting).status).toBe('running')
    const untilDone = root.jobs.wait('k-1', agent)
    job.finish({ detail: 'exit 0' })
    expect(await untilDone).toMatchObject({ status: 'completed', detail: 'exit 0' })
  })

  it('forgets the oldest finished jobs beyond the retention limit', async () => {
    const { root, agent } = await setup({ maxFinishedJobsPerOwner: 1 })
    const jobs = [fakeJob(), fakeJob(), fakeJob()]
    for (const [index, job] of jobs.entries()) root.jobs.start({ kind: 'k', label: `${index}`, owner: agent, run: job.run })
    jobs[0]!.finish()
    await root.jobs.wait('k-1', agent)
    jobs[1]!.finish()
    await root.jobs.wait('k-2', agent)
    expect(statusOf(root.jobs.list(agent))).toEqual(['k-2 completed', 'k-3 running'])
    expect(codeOf(() => root.jobs.read('k-1', agent))).toBe('UNKNOWN_JOB')
  })

  it('rejects an invalid config loudly', async () => {
    const root = new Context()
    await expect(root.plugin(jobsPlugin, { maxActiveJobsPerOwner: 0 })).rejects.toThrow(/maxActiveJobsPerOwner/)
    await expect(root.plugin(jobsPlugin, { defaultOutputLimitBytes: 8 })).rejects.toThrow(/defaultOutputLimitBytes/)
  })
})
