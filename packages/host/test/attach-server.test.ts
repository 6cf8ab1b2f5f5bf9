import { spawnSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eventually } from 'dsh-testkit'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { HumanGateway } from '../src/human/gateway'
import type { ServerMessage } from '../src/human/protocol'
import { ensureRuntimeDir, runtimeDirPath } from '../src/human/runtime-dir'
import { HumanSocketServer } from '../src/human/socket-server'
import { RawClient, startTestHost, type TestHost } from './attach-harness'

let host: TestHost
const clients: RawClient[] = []

beforeEach(async () => {
  host = await startTestHost()
  const opened = await host.call('terminal_open', { type: 'shell' })
  expect(opened.code).toBeUndefined()
})

afterEach(async () => {
  for (const client of clients.splice(0)) client.destroy()
  await host.close()
})

/** A connected client that has sent the right token. */
async function authenticated(): Promise<RawClient> {
  const client = await RawClient.connect(host.server.files.socketPath)
  clients.push(client)
  client.send({ type: 'hello', token: readFileSync(host.server.files.tokenPath, 'utf8').trim() })
  await client.nextOfType('ok')
  return client
}

/** A client that connected without authenticating. */
async function anonymous(): Promise<RawClient> {
  const client = await RawClient.connect(host.server.files.socketPath)
  clients.push(client)
  return client
}

const isError = (message: ServerMessage): message is Extract<ServerMessage, { type: 'error' }> => message.type === 'error'

describe('the attach socket', () => {
  it('lives in a 0700 directory as a 0600 socket next to a 0600 token of 64 hex digits', () => {
    expect(lstatSync(host.dir).mode & 0o777).toBe(0o700)
    expect(lstatSync(host.server.files.socketPath).isSocket()).toBe(true)
    expect(lstatSync(host.server.files.socketPath).mode & 0o777).toBe(0o600)
    expect(lstatSync(host.server.files.tokenPath).mode & 0o777).toBe(0o600)
    expect(readFileSync(host.server.files.tokenPath, 'utf8')).toMatch(/^[0-9a-f]{64}\n$/)
    expect(host.server.files.socketPath).toBe(join(host.dir, `${process.pid}.sock`))
  })

  it('refuses a wrong token, a missing hello and garbage first lines, and hangs up', async () => {
    const wrong = await anonymous()
    wrong.send({ type: 'hello', token: '0'.repeat(64) })
    expect(await wrong.next('refusal', isError)).toMatchObject({ code: 'UNAUTHORIZED', fatal: true })
    await eventually(() => wrong.closed, 'the host to hang up on the wrong token')

    const skipped = await anonymous()
    skipped.send({ type: 'list' })
    expect(await skipped.next('refusal', isError)).toMatchObject({ code: 'UNAUTHORIZED' })
    await eventually(() => skipped.closed, 'the host to hang up without hello')
    expect(skipped.messages.some((message) => message.type === 'sessions')).toBe(false)

    const garbage = await anonymous()
    garbage.send('\u0000\u0001not json at all\n')
    expect(await garbage.next('refusal', isError)).toMatchObject({ code: 'UNAUTHORIZED' })
    await eventually(() => garbage.closed, 'the host to hang up on garbage')

    const good = await authenticated()
    good.send({ type: 'list' })
    expect((await good.nextOfType('sessions')).sessions.map((session) => session.sessionId)).toEqual(['pty-1'])
  })

  it('answers a malformed line and an oversize line with an error, disconnects, and keeps serving', async () => {
    const malformed = await authenticated()
    malformed.send('{"type": "teleport"}\n')
    expect(await malformed.next('error', isError)).toMatchObject({ code: 'BAD_MESSAGE', fatal: true })
    await eventually(() => malformed.closed, 'the host to hang up on a malformed line')

    const oversize = await authenticated()
    oversize.send('x'.repeat(1024 * 1024 + 16))
    expect(await oversize.next('error', isError)).toMatchObject({ code: 'LINE_TOO_LONG', fatal: true })
    await eventually(() => oversize.closed, 'the host to hang up on an oversize line')

    const good = await authenticated()
    good.send({ type: 'list' })
    const listed = await good.nextOfType('sessions')
    expect(listed.host).toEqual({ pid: process.pid, cwd: process.cwd(), configPath: expect.stringContaining('danger-full-access.yml') })
    expect(listed.sessions[0]).toMatchObject({ sessionId: 'pty-1', ownerId: host.agent.id, input: { kind: 'prompt' } })
  })

  it('lets one attach type; a second attach watches and its input is refused HUMAN_WRITER_TAKEN', async () => {
    await host.call('terminal_send', { sessionId: 'pty-1', text: 'echo before-attach' })
    const first = await authenticated()
    first.send({ type: 'attach', sessionId: 'pty-1' })
    const screen = await first.nextOfType('screen')
    expect(screen).toMatchObject({ sessionId: 'pty-1', writer: true, rows: expect.any(Number), cols: expect.any(Number) })
    expect(Buffer.from(screen.data, 'base64').toString('utf8')).toContain('before-attach')

    const second = await authenticated()
    second.send({ type: 'attach', sessionId: 'pty-1' })
    expect(await second.nextOfType('screen')).toMatchObject({ writer: false, readOnlyReason: 'HUMAN_WRITER_TAKEN' })
    second.send({ type: 'input', data: Buffer.from('echo intruder\r').toString('base64') })
    expect(await second.next('refusal', isError)).toMatchObject({ code: 'HUMAN_WRITER_TAKEN' })
    expect(second.closed).toBe(false)

    first.send({ type: 'input', data: Buffer.from('echo typed-$((6*7))\r').toString('base64') })
    await eventually(() => first.output().includes('typed-42') && second.output().includes('typed-42'), 'both views to see the typed command run')
    const listed = await host.call('terminal_list')
    expect(listed.text).toMatch(/typing/)

    // The writer vanishes without a word: its view closes and the role is free again.
    first.destroy()
    const third = await authenticated()
    await eventually(async () => {
      const before = third.messages.length
      third.send({ type: 'attach', sessionId: 'pty-1' })
      const screen = await third.nextOfType('screen', before)
      if (screen.writer) return true
      third.send({ type: 'detach' })
      await third.nextOfType('detached', before)
      return false
    }, 'the abruptly disconnected writer to release the role')
  })

  it("names dsh-terminal attach in the agent's HUMAN_ACTIVE after the person typed in an attached terminal", async () => {
    const typist = await authenticated()
    typist.send({ type: 'attach', sessionId: 'pty-1' })
    expect(await typist.nextOfType('screen')).toMatchObject({ writer: true })
    typist.send({ type: 'input', data: Buffer.from('echo from-terminal\r').toString('base64') })
    await eventually(() => typist.output().includes('from-terminal'), 'the typed keys to echo')
    const refused = await host.call('terminal_send', { sessionId: 'pty-1', text: 'ls' })
    expect(refused.code).toBe('HUMAN_ACTIVE')
    expect(refused.text).toContain('a person is typing in PTY session pty-1 from a terminal (dsh-terminal attach); your send was not written.')
  })

  it('refuses input from a read-only attach and NO_SESSION for an unknown session', async () => {
    const watcher = await authenticated()
    watcher.send({ type: 'attach', sessionId: 'pty-9' })
    expect(await watcher.next('refusal', isError)).toMatchObject({ code: 'NO_SESSION' })
    watcher.send({ type: 'attach', sessionId: 'pty-1', readOnly: true })
    expect(await watcher.nextOfType('screen')).toMatchObject({ writer: false, readOnlyReason: 'READ_ONLY' })
    const before = watcher.messages.length
    watcher.send({ type: 'input', data: Buffer.from('echo nope\r').toString('base64') })
    expect(await watcher.next('refusal', isError, before)).toMatchObject({ code: 'READ_ONLY' })
    const read = await host.call('terminal_read', { sessionId: 'pty-1' })
    expect(read.text).not.toContain('nope')
  })

  it('drops a watcher that stops reading instead of buffering without bound', async () => {
    await host.server.close()
    host.server = await HumanSocketServer.start({ gateway: new HumanGateway(host.composition.root), dir: host.dir, maxUnreadBytes: 64 * 1024 })
    const slow = await authenticated()
    slow.send({ type: 'attach', sessionId: 'pty-1', readOnly: true })
    await slow.nextOfType('screen')
    slow.socket.pause()
    const flood = host.call('terminal_send', { sessionId: 'pty-1', text: "head -c 4000000 /dev/zero | tr '\\0' x; echo", timeoutMs: 60_000 })
    await eventually(
      () => {
        const presence = host.composition.root.get('terminals') as { list(agent: unknown): { human?: string }[] }
        return presence.list(host.agent)[0]?.human === undefined
      },
      'the slow watcher to be dropped',
      60_000,
    )
    slow.socket.resume()
    expect(await slow.next('refusal', isError)).toMatchObject({ code: 'SLOW_CONSUMER', fatal: true })
    await flood
  })

  it('removes its socket and token when it closes', async () => {
    const { socketPath, tokenPath } = host.server.files
    await host.server.close()
    expect(existsSync(socketPath)).toBe(false)
    expect(existsSync(tokenPath)).toBe(false)
  })

  it('sweeps the files of a host that died without cleaning up', async () => {
    const dead = spawnSync('true').pid!
    const stale = [join(host.dir, `${dead}.sock`), join(host.dir, `${dead}.token`)]
    for (const path of stale) writeFileSync(path, '')
    const next = await HumanSocketServer.start({ gateway: new HumanGateway(host.composition.root), dir: host.dir, pid: process.pid + 1_000_000 })
    try {
      expect(stale.filter((path) => existsSync(path))).toEqual([])
      expect(existsSync(host.server.files.socketPath)).toBe(true)
    } finally {
      await next.close()
    }
  })
})

describe('the runtime directory', () => {
  let root: string
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'dsh-attach-dir-'))
  })
  afterEach(() => rmSync(root, { recursive: true, force: true }))

  it('is created 0700 and refused when group/other bits are set, when it is a symlink, or when another uid owns it', () => {
    expect(lstatSync(ensureRuntimeDir(join(root, 'fresh'))).mode & 0o777).toBe(0o700)
    const open = join(root, 'open')
    mkdirSync(open)
    chmodSync(open, 0o755)
    expect(() => ensureRuntimeDir(open)).toThrow(expect.objectContaining({ code: 'UNSAFE_RUNTIME_DIR', message: expect.stringContaining('chmod 700') }))
    const link = join(root, 'link')
    symlinkSync(join(root, 'fresh'), link)
    expect(() => ensureRuntimeDir(link)).toThrow(expect.objectContaining({ code: 'UNSAFE_RUNTIME_DIR', message: expect.stringContaining('symlink') }))
    const foreign = join(root, 'foreign')
    mkdirSync(foreign, { mode: 0o700 })
    chownSync(foreign, 65534, 65534)
    expect(() => ensureRuntimeDir(foreign)).toThrow(expect.objectContaining({ code: 'UNSAFE_RUNTIME_DIR', message: expect.stringContaining('uid 65534') }))
  })

  it('is refused when its parent is a planted symlink or belongs to another uid, before anything is created in it', () => {
    const real = join(root, 'real')
    mkdirSync(real, { mode: 0o1777 })
    const link = join(root, 'link')
    symlinkSync(real, link)
    expect(() => ensureRuntimeDir(join(link, '0'))).toThrow(
      expect.objectContaining({ name: 'RuntimeDirError', code: 'UNSAFE_RUNTIME_DIR', message: expect.stringContaining('symlink') }),
    )
    const foreign = join(root, 'foreign-parent')
    mkdirSync(foreign)
    chmodSync(foreign, 0o1777)
    chownSync(foreign, 65534, 65534)
    expect(() => ensureRuntimeDir(join(foreign, '0'))).toThrow(
      expect.objectContaining({
        name: 'RuntimeDirError',
        code: 'UNSAFE_RUNTIME_DIR',
        message: expect.stringContaining('belongs to uid 65534, not to root or you'),
      }),
    )
    expect(readdirSync(real)).toEqual([])
    expect(readdirSync(foreign)).toEqual([])
  })

  it('is /tmp/dsh-terminal/<uid> for every host, whatever XDG_RUNTIME_DIR and TMPDIR say', () => {
    const saved = { XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR, TMPDIR: process.env.TMPDIR }
    try {
      process.env.XDG_RUNTIME_DIR = root
      process.env.TMPDIR = root
      expect(runtimeDirPath()).toBe(`/tmp/dsh-terminal/${process.getuid?.()}`)
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name]
        else process.env[name] = value
      }
    }
  })
})
