import type { Agent } from 'dsh-agent'
import { asTerminalSessionId } from 'dsh-terminal'
import { children, eventually, isAlive } from 'dsh-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { mountRealTools, type RealTools, text } from './real-stack'

// A background job on a real bash when its agent ends: with detachedTtlMs > 0 the job goes on with
// the detached session and the adopter follows it with job_output; with 0 it is interrupted, as before.

const LINES = 20
// One line per 100 ms, then exit 3 (a child shell, so the session's shell stays).
const JOB = `bash -c 'for i in $(seq 1 ${LINES}); do echo tick-$i; sleep 0.1; done; exit 3'`

const stacks: RealTools[] = []
const agents: Agent[] = []

async function agentOf(stack: RealTools): Promise<Agent> {
  const created = await stack.root.agents.create()
  agents.push(created)
  return created
}

afterAll(async () => {
  for (const each of agents) await each.dispose()
  for (const stack of stacks) await stack.dispose()
  expect(children(process.pid).filter(isAlive)).toEqual([])
})

/** The tick lines of a transcript, in order. */
function ticks(transcript: string): string[] {
  return transcript.match(/^tick-\d+$/gm) ?? []
}

describe('a background job whose agent ends', () => {
  it('with detachedTtlMs > 0 keeps running; the adopter sees its output once, in order, and its exit 3', async () => {
    const stack = await mountRealTools({ detachedTtlMs: 600_000 })
    stacks.push(stack)
    const first = await agentOf(stack)
    const opened = await stack.call(first, 'terminal_open', { type: 'shell' })
    const id = asTerminalSessionId(opened.meta?.sessionId as string)
    const started = await stack.call(first, 'terminal_send', { sessionId: id, text: JOB, run_in_background: true })
    const jobId = started.meta?.jobId as string
    expect(jobId).toMatch(/^pty-send-\d+$/)
    // The first agent reads part of it, then goes away in the middle of the job.
    let seen = ''
    await eventually(async () => {
      seen += '\n' + text(await stack.call(first, 'job_output', { jobId }))
      return ticks(seen).length >= 3
    }, 'the first ticks')
    await first.dispose()
    expect(ticks(seen).length).toBeLessThan(LINES)

    const second = await agentOf(stack)
    const resumed = await stack.call(second, 'terminal_open', { type: 'shell', resume: id })
    expect(resumed.isError).toBeFalsy()
    expect(resumed.meta).toMatchObject({ sessionId: id, resumed: true, jobs: [jobId] })
    expect(text(resumed)).toContain(`background job ${jobId} still runs on this session`)
    const listed = text(await stack.call(second, 'job_list'))
    expect(listed).toContain(jobId)

    const waited = await stack.call(second, 'job_output', { jobId, wait: true })
    seen += '\n' + text(waited)
    seen += '\n' + text(await stack.call(second, 'job_output', { jobId }))
    expect(ticks(seen)).toEqual(Array.from({ length: LINES }, (_, index) => `tick-${index + 1}`))
    expect(seen).toMatch(/exit: 3/)
    expect(seen).not.toMatch(/interrupted with SIGINT/)
    // The session is the adopter's and free again.
    expect(text(await stack.call(second, 'terminal_send', { sessionId: id, text: 'echo after-$((6*7))' }))).toContain('after-42')
    await stack.call(second, 'terminal_close', { sessionId: id })
  })

  it('with detachedTtlMs 0 is interrupted and its session closed, as before', async () => {
    const stack = await mountRealTools({ detachedTtlMs: 0 })
    stacks.push(stack)
    const first = await agentOf(stack)
    const opened = await stack.call(first, 'terminal_open', { type: 'shell' })
    const id = asTerminalSessionId(opened.meta?.sessionId as string)
    const pid = opened.meta?.pid as number
    const started = await stack.call(first, 'terminal_send', { sessionId: id, text: JOB, run_in_background: true })
    const jobId = started.meta?.jobId as string
    let seen = ''
    await eventually(async () => {
      seen += '\n' + text(await stack.call(first, 'job_output', { jobId }))
      return ticks(seen).length >= 1
    }, 'the first tick')
    const settled: string[] = []
    stack.root.jobs.onSettled((info) => settled.push(`${info.id} ${info.status}`))
    await first.dispose()
    expect(settled).toEqual([`${jobId} killed`])
    expect(isAlive(pid)).toBe(false)
    const second = await agentOf(stack)
    expect(text(await stack.call(second, 'terminal_list'))).not.toContain(id)
  })
})
