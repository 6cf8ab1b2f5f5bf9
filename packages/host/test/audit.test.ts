import { chmodSync, lstatSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { eventually } from 'dsh-testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { GENESIS, lineHash, verifyChain } from '../src/audit/chain'
import { SECRET_PLACEHOLDER } from '../src/audit/redact'
import { CompositionError } from '../src/compose/load-config'
import { HUMAN_CLIENTS, HumanGateway } from '../src/human/gateway'
import { type AuditedHost, auditedDirectory, startAuditedHost } from './audit-harness'
import { load, REPO_ROOT, tempDir } from './helpers'
import { runCli } from './process'

const cleanups: (() => Promise<void>)[] = []
const hosts: AuditedHost[] = []

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close()
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

async function audited(maxArgumentBytes?: number) {
  const directory = await auditedDirectory(maxArgumentBytes)
  cleanups.push(directory.remove)
  const host = await startAuditedHost(directory.configPath, directory.file)
  hosts.push(host)
  return { ...directory, host }
}

type Record_ = { event: string; seq: number; prev: string; [key: string]: unknown }

function records(file: string): Record_[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record_)
}

const AGENT_SECRET = 'agent-typed-Pw-7f3a9c'
const HUMAN_SECRET = 'human-typed-Pw-2b8e41'

describe('the audit log', () => {
  it('writes one chained record per call and per human act, cuts long text, and never writes a typed password', async () => {
    const { host, file } = await audited(256)
    const opened = await host.call('terminal_open', { type: 'shell' })
    expect(opened.code).toBeUndefined()
    const sessionId = opened.meta.sessionId as string
    expect(await host.call('terminal_send', { sessionId, text: 'echo audit-$((6*7))' })).toMatchObject({ meta: { waitReason: 'stdin_read', exitCode: 0 } })
    const long = `echo ${'y'.repeat(2000)} >/dev/null`
    await host.call('terminal_send', { sessionId, text: long })

    // The agent is given a password and types it at a `read -s` prompt.
    const asked = await host.call('terminal_send', { sessionId, text: `read -s -p 'password: ' ANSWER; echo "agent answer has \${#ANSWER} characters"` })
    expect(asked.meta.input).toMatchObject({ kind: 'password' })
    const answered = await host.call('terminal_send', { sessionId, text: AGENT_SECRET })
    expect(answered.text).toContain(`agent answer has ${AGENT_SECRET.length} characters`)

    // A person takes over and types the next one themselves.
    const prompted = await host.call('terminal_send', { sessionId, text: `read -s -p 'sudo password: ' HUMAN; echo "human answer has \${#HUMAN} characters"` })
    expect(prompted.meta.input).toMatchObject({ kind: 'password' })
    const gateway = new HumanGateway(host.composition.root)
    let seen = ''
    const view = await gateway.attach(sessionId, { onOutput: (bytes) => (seen += Buffer.from(bytes).toString('utf8')), onEnd: () => {} }, HUMAN_CLIENTS.attach)
    view.takeWrite()
    for (const key of HUMAN_SECRET) await view.write(key)
    await view.write('\r')
    await eventually(() => seen.includes(`human answer has ${HUMAN_SECRET.length} characters`), 'the shell to take the person’s answer')
    view.releaseWrite()
    view.close()
    await host.close()

    const text = readFileSync(file, 'utf8')
    expect(text).not.toContain(AGENT_SECRET)
    expect(text).not.toContain(HUMAN_SECRET)
    expect(verifyChain(text)).toMatchObject({ ok: true })
    expect(lstatSync(file).mode & 0o777).toBe(0o600)
    expect(lstatSync(dirname(file)).mode & 0o777).toBe(0o700)

    const lines = records(file)
    expect(lines[0]).toMatchObject({ event: 'audit_start', seq: 1, prev: GENESIS, pid: process.pid })
    expect(lines.at(-1)).toMatchObject({ event: 'audit_stop' })
    expect(lines.map((line) => line.seq)).toEqual(lines.map((_, index) => index + 1))
    const calls = lines.filter((line) => line.event === 'tool_call')
    expect(calls.map((line) => line.tool)).toEqual(['terminal_open', 'terminal_send', 'terminal_send', 'terminal_send', 'terminal_send', 'terminal_send'])
    expect(calls[0]).toMatchObject({ agent: host.agent.id, session: sessionId, arguments: { type: 'shell' }, outcome: { isError: false } })
    expect(calls[1]).toMatchObject({
      session: sessionId,
      arguments: { sessionId, text: 'echo audit-$((6*7))' },
      outcome: { isError: false, waitReason: 'stdin_read', exitCode: 0, input: 'prompt', bytes: expect.any(Number), durationMs: expect.any(Number) },
    })
    expect(Date.parse(calls[1]!.time as string)).not.toBeNaN()
    expect(calls[2]!.arguments).toEqual({ sessionId, text: { cut: long.slice(0, 256), bytes: long.length } })
    expect(calls[3]).toMatchObject({ outcome: { waitReason: 'stdin_read', input: 'password' } })
    expect(calls[4]).toMatchObject({ arguments: { sessionId, text: SECRET_PLACEHOLDER }, outcome: { isError: false } })
    const human = lines.filter((line) => line.event.startsWith('human_')).map((line) => line.event)
    expect(human).toEqual(['human_attach', 'human_takeover', 'human_secret_handoff', 'human_release', 'human_detach'])
    expect(lines.find((line) => line.event === 'human_secret_handoff')).toEqual({
      time: expect.any(String),
      event: 'human_secret_handoff',
      agent: host.agent.id,
      session: sessionId,
      client: HUMAN_CLIENTS.attach,
      program: 'bash',
      seq: expect.any(Number),
      prev: expect.stringMatching(/^[0-9a-f]{64}$/),
    })
  })

  it('continues the chain of an existing log after a restart', async () => {
    const { host, file, configPath } = await audited()
    await host.call('terminal_list')
    await host.close()
    hosts.splice(0)
    const before = records(file)
    const again = await startAuditedHost(configPath, file)
    hosts.push(again)
    await again.call('terminal_list')
    await again.close()
    hosts.splice(0)
    const text = readFileSync(file, 'utf8')
    expect(verifyChain(text)).toMatchObject({ ok: true, lines: before.length + 3 })
    const after = records(file)
    expect(after[before.length]).toMatchObject({ event: 'audit_start', seq: before.length + 1, prev: lineHash(text.split('\n')[before.length - 1]!) })
  })

  it('refuses to start on a log that ends in a cut line, or that others may read', async () => {
    const { host, file, configPath } = await audited()
    await host.close()
    hosts.splice(0)
    const whole = readFileSync(file, 'utf8')
    writeFileSync(file, whole.slice(0, -10))
    const cut = await load(configPath).catch((error: unknown) => error)
    expect(cut).toBeInstanceOf(CompositionError)
    expect((cut as CompositionError).message).toMatch(/ends in a cut line; check it with `dsh-terminal-mcp audit verify/)
    writeFileSync(file, whole)
    chmodSync(file, 0o644)
    const open = await load(configPath).catch((error: unknown) => error)
    expect((open as CompositionError).message).toMatch(/has mode 0644; others may read it/)
  })
})

describe('examples/audited.yml', () => {
  it('mounts the default composition with the log at $XDG_STATE_HOME/dsh-terminal/audit/audit.jsonl', async () => {
    const { dir, remove } = await tempDir('dsh-audit-state-')
    cleanups.push(remove)
    const previous = process.env.XDG_STATE_HOME
    process.env.XDG_STATE_HOME = dir
    try {
      const composition = await load(join(REPO_ROOT, 'examples/audited.yml'))
      const agent = await composition.agents.create()
      await composition.tools.execute({ callId: 'c1', name: 'terminal_list', agent })
      await agent.dispose()
      await composition.dispose()
    } finally {
      if (previous === undefined) delete process.env.XDG_STATE_HOME
      else process.env.XDG_STATE_HOME = previous
    }
    const file = join(dir, 'dsh-terminal', 'audit', 'audit.jsonl')
    expect(records(file).map((line) => `${line.event} ${line.tool ?? ''}`.trim())).toEqual(['audit_start', 'tool_call terminal_list', 'audit_stop'])
    expect(lstatSync(dirname(file)).mode & 0o777).toBe(0o700)
  })
})

describe('dsh-terminal-mcp audit verify', () => {
  /** A clean log of 6 records written by a real host: start, four calls, stop. */
  async function cleanLog(): Promise<{ file: string; lines: string[] }> {
    const { host, file } = await audited()
    for (const tool of ['terminal_list', 'job_list', 'terminal_list', 'job_list']) await host.call(tool)
    await host.close()
    hosts.splice(0)
    const lines = readFileSync(file, 'utf8').split('\n').slice(0, -1)
    expect(lines).toHaveLength(6)
    return { file, lines }
  }

  it('passes a clean log and reports each kind of tampering distinctly, with its line', async () => {
    const { file, lines } = await cleanLog()
    const variant = (name: string, text: string) => {
      const path = `${file}.${name}`
      writeFileSync(path, text)
      return path
    }
    const changed = variant(
      'changed',
      [...lines.slice(0, 2), lines[2]!.replace('"job_list"', '"job_kill"'), ...lines.slice(3)].map((line) => `${line}\n`).join(''),
    )
    const removed = variant('removed', [...lines.slice(0, 2), ...lines.slice(3)].map((line) => `${line}\n`).join(''))
    const reordered = variant('reordered', [lines[0], lines[1], lines[3], lines[2], lines[4], lines[5]].map((line) => `${line}\n`).join(''))
    const truncated = variant('truncated', `${lines.join('\n')}\n`.slice(0, -7))
    // Through the command for a clean log and two breaks; the same check, in-process, for the others.
    const [clean, changedRun, truncatedRun] = await Promise.all([file, changed, truncated].map((path) => runCli(['audit', 'verify', path])))
    expect(clean).toMatchObject({ code: 0, stderr: '' })
    expect(clean!.stdout).toBe(`${file}: ok, 6 records, chain intact; last line's sha256 ${lineHash(lines[5]!)}\n`)
    expect(changedRun).toMatchObject({ code: 1, stdout: '' })
    expect(changedRun!.stderr).toMatch(new RegExp(`^${changed}:3: changed: line 3 was changed`))
    expect(truncatedRun).toMatchObject({ code: 1, stdout: '' })
    expect(truncatedRun!.stderr).toMatch(new RegExp(`^${truncated}:6: truncated: line 6, the last, has no terminating newline`))
    expect(verifyChain(readFileSync(removed, 'utf8'))).toMatchObject({
      ok: false,
      break: { kind: 'removed', line: 3, detail: '1 record (seq 3) removed between lines 2 and 3' },
    })
    expect(verifyChain(readFileSync(reordered, 'utf8'))).toMatchObject({
      ok: false,
      break: { kind: 'reordered', line: 3, detail: expect.stringMatching(/^line 3 follows line 4 in the chain/) },
    })
  })

  it('tells a removed first record, a malformed line and an empty log apart', async () => {
    const { lines } = await cleanLog()
    const join = (picked: string[]) => picked.map((line) => `${line}\n`).join('')
    expect(verifyChain(join(lines.slice(1)))).toMatchObject({ ok: false, break: { kind: 'removed', line: 1 } })
    expect(verifyChain(join([lines[0]!, 'not json', ...lines.slice(2)]))).toMatchObject({ ok: false, break: { kind: 'malformed', line: 2 } })
    expect(verifyChain(join([lines[1]!, lines[0]!, ...lines.slice(2)]))).toMatchObject({ ok: false, break: { kind: 'reordered', line: 1 } })
    expect(verifyChain('')).toEqual({ ok: true, lines: 0, lastHash: GENESIS })
  })

  it('is a usage error without a file or with serving flags', async () => {
    const { parseCliArgs } = await import('../src/cli/args')
    expect(parseCliArgs(['audit', 'verify', 'x.jsonl'])).toEqual({ kind: 'audit-verify', file: 'x.jsonl' })
    expect(parseCliArgs(['audit', 'verify'])).toMatchObject({ kind: 'usage-error', message: expect.stringMatching(/needs the log file/) })
    expect(parseCliArgs(['audit', 'check', 'x'])).toMatchObject({ kind: 'usage-error', message: expect.stringMatching(/unknown audit action "check"/) })
    expect(parseCliArgs(['audit', 'verify', 'x', '--http', '8080'])).toMatchObject({ kind: 'usage-error', message: '--http does not go with audit verify' })
  })
})
