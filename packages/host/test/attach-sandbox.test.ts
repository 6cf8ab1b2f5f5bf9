import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { eventually } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { attachCommand } from './attach-harness'
import { DANGER_CONFIG, DEFAULT_CONFIG, READ_ONLY_CONFIG } from './helpers'
import { HeadlessHost } from './headless-host'
import { PrivateRuntime } from './private-runtime'
import { start } from './process'

/**
 * The attacks on the attach sockets from inside a sandbox, with real hosts (headless, from sources)
 * and real bubblewrap: a host started with another XDG_RUNTIME_DIR than the sandboxing host, a host
 * whose workspace is /tmp, and a read-only workspace of /. Every host runs in one private
 * `/tmp/dsh-terminal` (see PrivateRuntime), so the test meets no other host on this machine.
 */

/** Four hosts start tsx at once on a loaded machine: give them this long to listen. */
const STARTUP_MS = 90_000

/** A headless host that runs one script in a fresh session. */
class ScriptHost extends HeadlessHost {
  /** Start a host with exactly the runtime variables given (XDG_RUNTIME_DIR and TMPDIR removed otherwise). */
  static launch(runtime: PrivateRuntime, env: Record<string, string>, args: readonly string[]): ScriptHost {
    return new ScriptHost(HeadlessHost.run(runtime, args, { env, unset: ['XDG_RUNTIME_DIR', 'TMPDIR'] }))
  }

  /** Open a shell session and run `script` in it; resolves with what the session printed. */
  async shell(script: string): Promise<string> {
    const opened = await this.call('terminal_open', { type: 'shell' })
    const sessionId = /pty-\d+/.exec(opened)?.[0]
    if (!sessionId) throw new Error(`no session id in: ${opened}`)
    return await this.call('terminal_send', { sessionId, text: script, timeoutMs: 60_000 })
  }
}

let runtime: PrivateRuntime
let scratch: string
const xdg = { a: '', b: '' }
const hosts: Record<'sandboxed' | 'unconfined' | 'tmpWorkspace' | 'rootWorkspace', ScriptHost> = {} as never
/** Every host's pid, from the socket names in the namespace. */
let pids: number[] = []

/**
 * What an attacker in a session tries: undo what covers the sockets (unmount /tmp and the parent),
 * list the fixed parent and both XDG directories, then read every host's token and connect to every
 * host's socket (their pids are known, as `ps` would tell), directly and through the root of every
 * process it can see in /proc.
 */
function attackScript(inside = true): string {
  const dir = runtime.insideDir
  const connect = `python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print('CONN' + 'ECTED', sys.argv[1])"`
  const perHost = pids
    .map((pid) => `cat ${dir}/${pid}.token; ${connect} ${dir}/${pid}.sock; for root in /proc/[0-9]*/root; do cat $root${dir}/${pid}.token; done`)
    .join('; ')
  // (Outside, the unmounts would take away the test's own private runtime: the control skips them.)
  const undo = inside ? 'umount -l /tmp/dsh-terminal; umount -l /tmp; ' : ''
  return `{ ${undo}ls -A /tmp/dsh-terminal ${dir} ${xdg.a} ${xdg.b}; ${perHost}; } 2>&1; echo PROBE-DONE`
}

/** The tokens as the test reads them from outside the sandboxes. */
function tokens(): string[] {
  return pids.map((pid) => readFileSync(join(runtime.dir, `${pid}.token`), 'utf8').trim())
}

describe.skipIf(process.platform !== 'linux')("no sandboxed session reaches any host's attach socket", () => {
  beforeAll(async () => {
    runtime = await PrivateRuntime.start()
    scratch = mkdtempSync('/var/tmp/dsh-attach-sandbox-')
    xdg.a = mkdtempSync(join(scratch, 'xdg-a-'))
    xdg.b = mkdtempSync(join(scratch, 'xdg-b-'))
    for (const path of [xdg.a, xdg.b]) chmodSync(path, 0o700)
    const workspace = mkdtempSync(join(scratch, 'workspace-'))
    hosts.sandboxed = ScriptHost.launch(runtime, { XDG_RUNTIME_DIR: xdg.a }, ['--config', DEFAULT_CONFIG, '--cwd', workspace])
    hosts.unconfined = ScriptHost.launch(runtime, { XDG_RUNTIME_DIR: xdg.b }, ['--config', DANGER_CONFIG])
    hosts.tmpWorkspace = ScriptHost.launch(runtime, {}, ['--config', DEFAULT_CONFIG, '--cwd', '/tmp'])
    hosts.rootWorkspace = ScriptHost.launch(runtime, { TMPDIR: '/var/tmp' }, ['--config', READ_ONLY_CONFIG, '--cwd', '/'])
    const sockets = await eventually(
      () => {
        const names = existsSync(runtime.dir) ? readdirSync(runtime.dir).filter((name) => name.endsWith('.sock')) : []
        return names.length === 4 && names
      },
      'four hosts to listen in /tmp/dsh-terminal',
      STARTUP_MS,
    )
    pids = sockets.map((name) => Number(name.replace('.sock', '')))
  }, STARTUP_MS + 10_000)

  afterAll(async () => {
    await Promise.all(Object.values(hosts).map((host) => host.close()))
    await runtime?.close()
    rmSync(scratch, { recursive: true, force: true })
  })

  it('every host uses /tmp/dsh-terminal/<uid>, whatever its XDG_RUNTIME_DIR or TMPDIR; attach lists all four from any environment', async () => {
    expect(readdirSync(xdg.a)).toEqual([])
    expect(readdirSync(xdg.b)).toEqual([])
    const [command, ...args] = attachCommand([], runtime)
    const listing = start('env', [`XDG_RUNTIME_DIR=${xdg.b}`, 'TMPDIR=/var/tmp', command!, ...args])
    listing.child.stdin.end()
    const listed = await listing.finished
    expect(listed.code).toBe(0)
    for (const pid of pids) expect(listed.stdout).toContain(`host ${pid}:`)
  })

  it('outside any sandbox, the attack reads every token and connects to every socket (the probe works)', async () => {
    const [command, ...args] = runtime.wrap(['sh', '-c', attackScript(false)])
    const unconfined = start(command!, args)
    unconfined.child.stdin.end()
    const { stdout } = await unconfined.finished
    for (const token of tokens()) expect(stdout).toContain(token)
    for (const pid of pids) expect(stdout.split('\n')).toContain(`${pid}.sock`)
    expect(stdout.match(/CONNECTED/g)).toHaveLength(pids.length)
  })

  it.each([
    ['a host whose XDG_RUNTIME_DIR differs from the others', 'sandboxed'],
    ['a host whose read-only workspace is /', 'rootWorkspace'],
  ] as const)('a sandboxed session of %s sees no host socket or token', async (_, which) => {
    const inside = await hosts[which].shell(attackScript())
    expect(inside).toContain('PROBE-DONE')
    expect(inside).not.toContain('CONNECTED')
    for (const token of tokens()) expect(inside).not.toContain(token)
    const listed = inside.split('\n').map((line) => line.trim())
    for (const pid of pids) expect(listed).not.toContain(`${pid}.sock`)
  })

  it('a host whose workspace is /tmp itself opens no sandboxed session: /tmp would come back whole, with every socket in it', async () => {
    const refusal = await hosts.tmpWorkspace.call('terminal_open', { type: 'shell' }).then(
      (text) => `opened: ${text}`,
      (error: Error) => error.message,
    )
    expect(refusal).toMatch(/^terminal_open failed: /)
    expect(refusal).toContain("the machine's shared temporary directory")
  })
})
