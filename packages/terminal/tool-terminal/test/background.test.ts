import * as jobsPlugin from 'dsh-jobs'
import { afterEach, describe, expect, it } from 'vitest'
import { disposeAll, flush, setup } from './harness'

afterEach(disposeAll)

const RUNNING = /^\[status: running, \d+(\.\d)?m?s elapsed\]$/

describe('background sends through ctx.jobs', () => {
  it('starts a pty-send job labelled "<id>: <text>" with the result cap as its output limit', async () => {
    const h = await setup({ config: { maxResultBytes: 4096 } })
    await h.call('terminal_open', { type: 'shell' })
    h.backend.session('pty-1').replies.push('hang')
    const started = await h.call('terminal_send', { sessionId: 'pty-1', text: 'make test', run_in_background: true })
    expect(h.text(started)).toBe('started background job pty-send-1')
    expect(started.meta).toEqual({ sessionId: 'pty-1', jobId: 'pty-send-1', background: true, truncated: false })
    expect(started.presentation).toEqual({
      kind: 'execute',
      title: 'pty-1: make test',
      rawInput: { sessionId: 'pty-1', text: 'make test', run_in_background: true },
    })
    const job = h.root.jobs.get('pty-send-1', h.agent)
    expect({ kind: job?.kind, label: job?.label, limit: job?.outputLimitBytes, status: job?.status }).toEqual({
      kind: 'pty-send',
      label: 'pty-1: make test',
      limit: 4096,
      status: 'running',
    })
    const send = h.backend.session('pty-1').sends[0]!
    expect(send.request).toEqual({ text: 'make test', submit: true, settleOnSilence: false, outlivesOwner: true, timeoutMs: 600_000, callId: 'call-2' })
  })

  it('a background send never settles on silence and runs for backgroundTimeoutMs', async () => {
    const h = await setup({ config: { backgroundTimeoutMs: 5_000 } })
    await h.call('terminal_open', { type: 'shell' })
    h.backend.session('pty-1').replies.push('hang')
    await h.call('terminal_send', { sessionId: 'pty-1', text: 'python3 -m http.server', run_in_background: true })
    expect(h.backend.session('pty-1').sends[0]!.request).toMatchObject({ settleOnSilence: false, timeoutMs: 5_000 })
    // A foreground send keeps the backend's silence rule and timeout.
    const fg = await setup()
    await fg.call('terminal_open', { type: 'shell' })
    await fg.call('terminal_send', { sessionId: 'pty-1', text: 'ls' })
    expect(fg.backend.session('pty-1').sends[0]!.request).toEqual({ text: 'ls', submit: true, signal: expect.any(AbortSignal), callId: 'call-2' })
  })

  it('job_output shows incremental output, then the final facts as the status detail', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    h.backend.session('pty-1').replies.push('hang')
    await h.call('terminal_send', { sessionId: 'pty-1', text: 'build', run_in_background: true })
    const send = h.backend.session('pty-1').sends[0]!

    send.emit('compiling\n')
    const [first, firstStatus] = h.text(await h.call('job_output', { jobId: 'pty-send-1' })).split('\n')
    expect(first).toBe('compiling')
    expect(firstStatus).toMatch(RUNNING)

    const [none, noneStatus] = h.text(await h.call('job_output', { jobId: 'pty-send-1' })).split('\n')
    expect(none).toBe('(no new output)')
    expect(noneStatus).toMatch(RUNNING)

    send.emit('linking\n')
    send.finish({ exitCode: 2 })
    const final = await h.call('job_output', { jobId: 'pty-send-1', wait: true })
    expect(h.text(final)).toBe('linking\n[status: completed, wait: stdin_read, exit: 2, session: running]')
    // The session is free again once the job has ended.
    const next = await h.call('terminal_send', { sessionId: 'pty-1', text: 'echo ok' })
    expect(h.text(next)).toBe('out:echo ok\n[wait: stdin_read]\n[exit: 0]\n[session: running]')
  })

  it('job_output waitFor sees output the job pulls from the send, and returns on the matching line', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    h.backend.session('pty-1').replies.push('hang')
    await h.call('terminal_send', { sessionId: 'pty-1', text: 'npm run dev', run_in_background: true })
    const send = h.backend.session('pty-1').sends[0]!
    const pending = h.call('job_output', { jobId: 'pty-send-1', waitFor: 'ready in \\d+ ms' })
    send.emit('> vite\n')
    await flush()
    send.emit('  ready in 250 ms\n')
    const result = await pending
    expect(h.text(result)).toMatch(/^> vite\n {2}ready in 250 ms\n\[waited: match\]\n\[match: ready in 250 ms\]\n\[status: running, /)
    expect(result.meta).toMatchObject({ waited: 'match', status: 'running', match: { text: 'ready in 250 ms', line: '  ready in 250 ms' } })
    expect(send.settled).toBe(false)
  })

  it("writes earlier output at the job's end under its marker, and its loss reaches the detail", async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    h.backend.session('pty-1').replies.push({ viewport: 'done\n', earlierOutput: 'LATE\n', earlierTruncated: true })
    await h.call('terminal_send', { sessionId: 'pty-1', text: 'make', run_in_background: true })
    const final = await h.call('job_output', { jobId: 'pty-send-1', wait: true })
    expect(h.text(final)).toBe(
      '\n[earlier output, printed after the previous result]\nLATE\ndone\n[status: completed, wait: stdin_read, exit: 0, session: running, output truncated]',
    )
  })

  it('notes in the status detail when the send lost output bytes', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    h.backend.session('pty-1').replies.push('hang')
    await h.call('terminal_send', { sessionId: 'pty-1', text: 'yes', run_in_background: true })
    const send = h.backend.session('pty-1').sends[0]!
    send.emit('y\n', true)
    send.finish({ waitReason: 'timeout', exitCode: undefined })
    expect(h.text(await h.call('job_output', { jobId: 'pty-send-1', wait: true }))).toBe(
      'y\n[status: completed, wait: timeout, session: running, output truncated]',
    )
  })

  it('job_kill interrupts the foreground group with SIGINT and the job ends killed', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const session = h.backend.session('pty-1')
    session.replies.push('hang')
    await h.call('terminal_send', { sessionId: 'pty-1', text: 'sleep 60', run_in_background: true })
    const kill = await h.call('job_kill', { jobId: 'pty-send-1' })
    expect(h.text(kill)).toBe('requested cancellation of job pty-send-1')
    expect(session.signals).toEqual(['SIGINT'])
    expect(session.sends[0]!.cancels).toBe(1)
    const final = await h.call('job_output', { jobId: 'pty-send-1', wait: true })
    expect(h.text(final)).toBe('^C\n[status: killed, interrupted with SIGINT; wait: stdin_read, exit: 130, session: running]')
    expect(h.root.jobs.get('pty-send-1', h.agent)?.status).toBe('killed')
  })

  it('a failing send ends the job failed with the error', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    h.backend.session('pty-1').replies.push('hang')
    await h.call('terminal_send', { sessionId: 'pty-1', text: 'ls', run_in_background: true })
    h.backend.session('pty-1').sends[0]!.fail(new Error('PTY write failed: EIO'))
    const final = await h.call('job_output', { jobId: 'pty-send-1', wait: true })
    expect(h.text(final)).toBe('(no new output)\n[status: failed, PTY write failed: EIO]')
  })

  it('a send refused because a background job holds the session names that job, until the job ends', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const session = h.backend.session('pty-1')
    session.replies.push('hang')
    await h.call('terminal_send', { sessionId: 'pty-1', text: 'make', run_in_background: true })
    const busy = await h.call('terminal_send', { sessionId: 'pty-1', text: 'ls' })
    expect([h.text(busy), busy.error?.code]).toEqual([
      'Error: PTY session pty-1 is busy: background job pty-send-1 holds it until its send ends (it may be running or being interrupted). Follow it with job_output or stop it with job_kill, then send again.',
      'SEND_ACTIVE',
    ])
    const busyInBackground = await h.call('terminal_send', { sessionId: 'pty-1', text: 'ls', run_in_background: true })
    expect(h.text(busyInBackground)).toBe(
      'Error: PTY session pty-1 is busy: background job pty-send-1 holds it until its send ends (it may be running or being interrupted). Follow it with job_output or stop it with job_kill, then send again.',
    )
    session.sends[0]!.finish()
    await h.call('job_output', { jobId: 'pty-send-1', wait: true })
    await flush()
    expect(h.text(await h.call('terminal_send', { sessionId: 'pty-1', text: 'ls' }))).toBe('out:ls\n[wait: stdin_read]\n[exit: 0]\n[session: running]')
  })

  it('a refused send leaves no job behind: SEND_ACTIVE, unknown and foreign sessions', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const session = h.backend.session('pty-1')
    session.replies.push('hang')
    const foreground = h.call('terminal_send', { sessionId: 'pty-1', text: 'sleep 1' })
    await flush()
    const active = await h.call('terminal_send', { sessionId: 'pty-1', text: 'x', run_in_background: true })
    expect([h.text(active), active.error?.code]).toEqual([
      'Error: PTY session pty-1 is busy: an earlier send on it has not finished (another terminal_send still waiting, or one being interrupted). Wait for it, then send again; terminal_signal SIGINT interrupts what runs in front.',
      'SEND_ACTIVE',
    ])
    const unknown = await h.call('terminal_send', { sessionId: 'pty-7', text: 'x', run_in_background: true })
    expect(unknown.error?.code).toBe('NO_SESSION')
    const other = await h.root.agents.create()
    const foreign = await h.call('terminal_send', { sessionId: 'pty-1', text: 'x', run_in_background: true }, { agent: other })
    expect(foreign.error?.code).toBe('FOREIGN_SESSION')
    expect(h.root.jobs.list(h.agent)).toEqual([])
    expect(h.text(await h.call('job_list'))).toBe('(no jobs)')
    expect(session.sends.length).toBe(1)
    session.sends[0]!.finish()
    await foreground
    const started = await h.call('terminal_send', { sessionId: 'pty-1', text: 'y', run_in_background: true })
    expect(h.text(started)).toMatch(/^started background job pty-send-\d+$/)
    expect(h.root.jobs.list(h.agent).length).toBe(1)
  })

  it('a job refused by the registry (JOB_LIMIT) writes nothing to the session', async () => {
    const h = await setup({ maxActiveJobsPerOwner: 1 })
    await h.call('terminal_open', { type: 'shell' })
    await h.call('terminal_open', { type: 'shell' })
    h.backend.session('pty-1').replies.push('hang')
    await h.call('terminal_send', { sessionId: 'pty-1', text: 'sleep 60', run_in_background: true })
    const refused = await h.call('terminal_send', { sessionId: 'pty-2', text: 'echo no', run_in_background: true })
    expect(refused.error?.code).toBe('JOB_LIMIT')
    expect(h.backend.session('pty-2').sends).toEqual([])
  })

  it('without ctx.jobs a background send fails before writing; foreground sends still work', async () => {
    const h = await setup({ jobs: false })
    await h.call('terminal_open', { type: 'shell' })
    const refused = await h.call('terminal_send', { sessionId: 'pty-1', text: 'rm -rf build', run_in_background: true })
    expect(refused.error?.code).toBe('JOBS_UNAVAILABLE')
    expect(h.text(refused)).toBe(
      'Error: run_in_background needs the background job service (ctx.jobs, plugin dsh-jobs), which is not mounted; nothing was sent. Send in the foreground instead.',
    )
    expect(h.backend.session('pty-1').sends).toEqual([])
    const foreground = await h.call('terminal_send', { sessionId: 'pty-1', text: 'ls' })
    expect(foreground.isError).toBe(false)
  })

  it('reads ctx.jobs at call time: mounted later works, unmounted again refuses', async () => {
    const h = await setup({ jobs: false })
    await h.call('terminal_open', { type: 'shell' })
    const fiber = await h.root.plugin(jobsPlugin, {})
    const started = await h.call('terminal_send', { sessionId: 'pty-1', text: 'ls', run_in_background: true })
    expect(h.text(started)).toBe('started background job pty-send-1')
    await h.root.jobs.wait('pty-send-1', h.agent)
    await fiber.dispose()
    const refused = await h.call('terminal_send', { sessionId: 'pty-1', text: 'ls', run_in_background: true })
    expect(refused.error?.code).toBe('JOBS_UNAVAILABLE')
  })

  it('ending the agent cancels its background send and closes its session', async () => {
    const h = await setup()
    await h.call('terminal_open', { type: 'shell' })
    const session = h.backend.session('pty-1')
    session.replies.push('hang')
    await h.call('terminal_send', { sessionId: 'pty-1', text: 'sleep 60', run_in_background: true })
    await h.agent.dispose()
    expect(session.closes).toEqual(['PTY owner disposed'])
    expect(session.sends[0]!.settled).toBe(true)
  })
})
