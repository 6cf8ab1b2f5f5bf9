import type { Agent } from 'dsh-agent'
import type { ToolResult } from 'dsh-tools'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { children, eventually, isAlive } from 'dsh-testkit'
import { mountRealTools, type RealTools, text } from './real-stack'

// A background job's transcript on a real bash: the output the session printed between the previous
// result and the job's send comes first, before any of the job's own output, even when the job's
// output was read while it ran.

const EARLIER = '[earlier output, printed after the previous result]'

let stack: RealTools
let agent: Agent
let dir: string

function call(name: string, args: unknown = {}): Promise<ToolResult> {
  return stack.call(agent, name, args)
}

beforeAll(async () => {
  stack = await mountRealTools()
  agent = await stack.root.agents.create()
  dir = mkdtempSync(join(tmpdir(), 'dsh-bg-earlier-'))
  execFileSync('mkfifo', [join(dir, 'hold'), join(dir, 'go')])
})

afterAll(async () => {
  await agent?.dispose()
  await stack.dispose()
  rmSync(dir, { recursive: true, force: true })
  expect(children(process.pid).filter(isAlive)).toEqual([])
})

it("a background job's transcript opens with the earlier output, before the deltas read while it ran", async () => {
  await call('terminal_open', { type: 'shell', name: 'bg', cwd: dir })
  // A child of the shell prints after the send's result: earlier output for the next send.
  await call('terminal_send', { sessionId: 'pty-1', text: '(read -r x < hold; echo EARLY-LINE; echo EARLY-TAIL) &' })
  writeFileSync(join(dir, 'hold'), 'go\n')
  // Waiting without taking it: a page that stops before the newest line leaves it earlier output.
  await eventually(async () => text(await call('terminal_read', { sessionId: 'pty-1', offset: 1, count: 1 })).includes('EARLY-LINE\n'), 'EARLY-LINE')

  const started = await call('terminal_send', { sessionId: 'pty-1', text: 'echo JOB-START; read -r x < go; echo JOB-END', run_in_background: true })
  const jobId = started.meta?.jobId as string
  // Reading the job while it runs pulls its first delta before the send settles.
  const first = text(await call('job_output', { jobId, waitFor: '^JOB-START' }))
  writeFileSync(join(dir, 'go'), 'go\n')
  const rest = text(await call('job_output', { jobId, wait: true }))
  const transcript = first + rest
  expect(transcript.indexOf(EARLIER)).toBeGreaterThanOrEqual(0)
  // The earlier line once, under its marker, before the job's echo (the job's "Done" line names it too).
  const line = '\nEARLY-LINE\n'
  expect(transcript.indexOf(EARLIER)).toBeLessThan(transcript.indexOf(line))
  expect(transcript.indexOf(line)).toBeLessThan(transcript.indexOf('echo JOB-START'))
  expect(transcript.indexOf(line)).toBe(transcript.lastIndexOf(line))
  expect(rest).toContain('JOB-END')
}, 20_000)
