import { Context, type Fiber } from '@deepseek-ai/cordis'
import * as agentPlugin from 'dsh-agent'
import * as jobsPlugin from 'dsh-jobs'
import { OutputBuffer } from 'dsh-jobs'
import { afterEach, describe, expect, it } from 'vitest'
import { fakeJob } from './fake'

let fibers: Fiber[] = []

async function setup() {
  const root = new Context()
  fibers = [await root.plugin(agentPlugin), await root.plugin(jobsPlugin)]
  const agent = await root.agents.create()
  return { root, agent }
}

describe('OutputBuffer', () => {
  it('keeps everything under the limit and reports no loss', () => {
    const buffer = new OutputBuffer(64)
    buffer.write('hello ')
    buffer.write('')
    buffer.write('world')
    expect(buffer.take()).toEqual({ text: 'hello world', truncated: false })
    expect(buffer.take()).toEqual({ text: '', truncated: false })
  })

  it('keeps the tail within the limit, cut on a code point, and says it lost bytes once', () => {
    const buffer = new OutputBuffer(64)
    buffer.write('x'.repeat(100))
    buffer.write('😀'.repeat(20))
    const { text, truncated } = buffer.take()
    expect(truncated).toBe(true)
    expect(text).toBe('😀'.repeat(16))
    buffer.write('fresh')
    expect(buffer.take()).toEqual({ text: 'fresh', truncated: false })
  })

  it('stays bounded under a flood of small chunks', () => {
    const limit = 1024
    const buffer = new OutputBuffer(limit)
    let maxHeld = 0
    for (let index = 0; index < 100_000; index++) {
      buffer.write(`line ${index}\n`)
      maxHeld = Math.max(maxHeld, buffer.bytes)
    }
    expect(maxHeld).toBeLessThan(limit + 32)
    const { text, truncated } = buffer.take()
    expect(truncated).toBe(true)
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(limit)
    expect(text.endsWith('line 99999\n')).toBe(true)
  })

  it('bounds a single chunk larger than the limit on write', () => {
    const buffer = new OutputBuffer(100)
    buffer.write('y'.repeat(1_000_000))
    expect(buffer.bytes).toBe(100)
  })
})

describe('ctx.jobs output', () => {
  afterEach(async () => {
    for (const fiber of fibers.reverse()) await fiber.dispose()
    fibers = []
  })

  it('returns the output since the previous read, from write() and readOutput() alike', async () => {
    const { root, agent } = await setup()
    const job = fakeJob()
    root.jobs.start({ kind: 'k', label: 'l', owner: agent, run: job.run })
    job.context().write('pushed\n')
    job.produce('pulled\n')
    expect(root.jobs.read('k-1', agent)).toMatchObject({ output: 'pushed\npulled\n', truncated: false, job: { status: 'running' } })
    expect(root.jobs.read('k-1', agent).output).toBe('')
    job.produce('tail\n')
    job.finish()
    await root.jobs.wait('k-1', agent)
    // Output produced before the end is pulled once when the job ends, then the reader is left alone.
    job.produce('after the end\n')
    expect(root.jobs.read('k-1', agent)).toMatchObject({ output: 'tail\n', job: { status: 'completed' } })
    expect(root.jobs.read('k-1', agent).output).toBe('')
  })

  it("bounds unread output to the job's outputLimitBytes, keeping the tail", async () => {
    const { root, agent } = await setup()
    const job = fakeJob()
    root.jobs.start({ kind: 'k', label: 'l', owner: agent, outputLimitBytes: 64, run: job.run })
    for (let index = 0; index < 50; index++) job.context().write(`chunk ${index}\n`)
    const read = root.jobs.read('k-1', agent)
    expect(read.truncated).toBe(true)
    expect(Buffer.byteLength(read.output)).toBeLessThanOrEqual(64)
    expect(read.output.endsWith('chunk 49\n')).toBe(true)
    expect(read.job.outputLimitBytes).toBe(64)
  })

  it('notes a failing output reader instead of throwing', async () => {
    const { root, agent } = await setup()
    let end!: () => void
    const done = new Promise<void>((resolve) => {
      end = resolve
    })
    root.jobs.start({
      kind: 'k',
      label: 'l',
      owner: agent,
      run: () => ({
        cancel: () => end(),
        done,
        readOutput: () => {
          throw new Error('pty gone')
        },
      }),
    })
    expect(root.jobs.read('k-1', agent).output).toBe('[could not read job output: pty gone]\n')
  })
})
