import { execFile, execFileSync, spawn } from 'node:child_process'
import { existsSync, readlinkSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commandLine, eventually, installed, isAlive, type SshHost, startSshHost } from '../src/index'

/*
 * The ssh host fixture against the real thing: a login over its ssh argv runs in the namespace,
 * a cut link refuses logins until restored, stop() and the death of the process that started it
 * both leave no namespace, link, sshd or key behind.
 */
const runs = process.getuid?.() === 0 && ['ip', 'ssh', 'ssh-keygen', 'sshd'].every((program) => installed(program))

/** Run `remote` over the host's ssh; resolves with its stdout, rejects with ssh's error. */
function overSsh(host: SshHost, remote: string[]): Promise<string> {
  const [file = 'ssh', ...args] = host.connect(remote)
  return new Promise((resolve, reject) => {
    // ssh keeps the first value of an option: a login over the cut link gives up after 2 s, not 10.
    execFile(file, ['-o', 'ConnectTimeout=2', ...args], { encoding: 'utf8' }, (error, stdout, stderr) =>
      error ? reject(new Error(stderr || error.message)) : resolve(stdout),
    )
  })
}

function namespaces(): string {
  return execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
}

/** The directory of the client key, which holds every file of the host. */
function keyDir(host: SshHost): string {
  return dirname(host.ssh[host.ssh.indexOf('-i') + 1]!)
}

describe.skipIf(!runs)('startSshHost', () => {
  let host: SshHost
  beforeAll(async () => {
    host = await startSshHost({ index: 7 })
  }, 30_000)
  afterAll(async () => {
    host?.restore()
    await host?.stop()
  })

  it('a login runs on the host: in its network namespace, under its sshd, with a word quoted as it is', async () => {
    const output = await overSsh(host, ['sh', '-c', `readlink /proc/self/ns/net; echo "it's $PPID"`])
    const [namespace, said] = output.trim().split('\n')
    expect(namespace).toBe(readlinkSync(`/proc/${host.sshdPid}/ns/net`))
    expect(namespace).not.toBe(readlinkSync('/proc/self/ns/net'))
    expect(said).toMatch(/^it's \d+$/)
    expect(host.runsHere(host.sshdPid)).toBe(true)
    expect(host.runsHere(process.pid)).toBe(false)
  })

  it('cut refuses logins; restore lets them in again', async () => {
    host.cut()
    await expect(overSsh(host, ['true'])).rejects.toThrow()
    host.restore()
    expect(await overSsh(host, ['echo', 'back'])).toBe('back\n')
  })

  it('stop removes sshd, what it runs, a daemon detached on the host, the namespace, the link and the keys', async () => {
    const other = await startSshHost({ index: 8 })
    const [file = 'ssh', ...args] = other.connect(['sleep', '1000'])
    const login = spawn(file, args, { stdio: 'ignore' })
    const sleeper = await eventually(() => other.served().find((pid) => commandLine(pid)?.[0] === 'sleep'), 'the sleep over ssh')
    // A daemon on the host, detached from sshd's tree (as a session host started on first use is).
    const daemon = Number(
      execFileSync('ip', ['netns', 'exec', other.namespace, 'sh', '-c', 'setsid sleep 1001 </dev/null >/dev/null 2>&1 & echo $!'], { encoding: 'utf8' }).trim(),
    )
    expect(other.served()).not.toContain(daemon)
    expect(other.processes()).toEqual(expect.arrayContaining([other.sshdPid, sleeper, daemon]))
    await other.stop()
    expect(isAlive(other.sshdPid)).toBe(false)
    expect(isAlive(sleeper)).toBe(false)
    expect(isAlive(daemon)).toBe(false)
    expect(namespaces()).not.toContain(other.namespace)
    expect(existsSync(keyDir(other))).toBe(false)
    await eventually(() => login.exitCode !== null || login.signalCode !== null, 'the ssh client to see the end')
  })

  it('the death of the process that started it removes it too', async () => {
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href
    const fixture = pathToFileURL(fileURLToPath(new URL('../src/ssh-host.ts', import.meta.url))).href
    const script = `const { startSshHost } = await import(${JSON.stringify(fixture)}); const host = await startSshHost(); console.log(JSON.stringify({ namespace: host.namespace, sshd: host.sshdPid })); setInterval(() => {}, 1000)`
    const starter = spawn(process.execPath, ['--import', tsx, '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
    let output = ''
    starter.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    const started = await eventually(
      () => (output.includes('\n') ? (JSON.parse(output) as { namespace: string; sshd: number }) : undefined),
      'the host to start',
      30_000,
    )
    expect(isAlive(started.sshd)).toBe(true)
    starter.kill('SIGKILL')
    await eventually(() => !isAlive(started.sshd), 'sshd to be killed by the watchdog')
    await eventually(() => !namespaces().includes(started.namespace), 'the namespace to be removed')
    await eventually(
      () => !execFileSync('ip', ['-o', 'link'], { encoding: 'utf8' }).includes(`dshs${starter.pid! % 100_000}x0h`),
      'the veth pair to be removed',
    )
  }, 40_000)
})
