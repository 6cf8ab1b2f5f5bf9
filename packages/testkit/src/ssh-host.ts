import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { descendants } from './proc'

/**
 * A second host for ssh tests (root): a network namespace of the test's own joined by a veth pair,
 * running Debian's sshd on its own port with a generated host key and client key. The namespace
 * shares the filesystem and the pid namespace, so the same node and packages run there and /proc
 * shows its processes. Should the test die, a watchdog removes sshd, the namespace and the keys.
 */
export interface SshHost {
  /** The namespace's name (`ip netns exec NAME …` runs a command there). */
  readonly namespace: string
  /** The host's address, reachable from this namespace. */
  readonly address: string
  /** sshd's port on that address. */
  readonly port: number
  /** The pid of the sshd that serves it (every session over ssh is its descendant). */
  readonly sshdPid: number
  /** `ssh` and its options up to the destination: append a remote command, or use {@link SshHost.connect}. */
  readonly ssh: readonly string[]
  /** The argv that runs `remote` on the host over ssh, each word quoted for the remote shell. */
  connect(remote: readonly string[]): string[]
  /** Pids of every live process sshd runs for its clients (its descendants). */
  served(): number[]
  /** Pids of every process in the host's namespace, sshd included (a detached daemon too). */
  processes(): number[]
  /** Whether `pid` runs on this host: in its network namespace (false for a process that is gone). */
  runsHere(pid: number): boolean
  /** Cut the link (the veth end on this side goes down): packets stop, connections stay open. */
  cut(): void
  /** Bring the link back up. */
  restore(): void
  /** Kill every process in the namespace; remove the namespace, the veth pair and the keys. */
  stop(): Promise<void>
}

/** What may differ between ssh hosts of one test. */
export interface SshHostOptions {
  /** Distinguishes hosts of one process (0–49): their namespaces, links and addresses differ. */
  readonly index?: number
  /** sshd's port inside the namespace; default 2222. */
  readonly port?: number
  /**
   * The client's `ServerAliveInterval` in seconds (with `ServerAliveCountMax 3`): how long ssh itself
   * takes to give up on a silent link. Default 30, longer than any test waits, so what a test sees
   * on a cut link is the session client's own liveness check, not ssh's.
   */
  readonly serverAliveSeconds?: number
}

const SSHD = '/usr/sbin/sshd'

/**
 * Runs outside the namespace: starts sshd inside it, says its pid, then waits for its stdin to end
 * (stop() ends it, and so does this process's death), kills every process in the namespace (sshd,
 * what it runs, anything they detached) and removes what the host consists of.
 */
const WATCHDOG = `
ip netns exec "$1" ${SSHD} -D -e -f "$2" & sshd=$!
echo "sshd $sshd"
read -r _
kill -KILL $(ip netns pids "$1") 2>/dev/null
kill -KILL "$sshd" 2>/dev/null
wait "$sshd" 2>/dev/null
ip netns del "$1" 2>/dev/null
ip link del "$3" 2>/dev/null
rm -rf "$4"
`

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] })
}

/** `ip netns pids`: every process in the namespace (none once it is gone). */
function namespacePids(namespace: string): number[] {
  try {
    return execFileSync('ip', ['netns', 'pids', namespace], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .split('\n')
      .filter((line) => /^\d+$/.test(line))
      .map(Number)
  } catch {
    return []
  }
}

/** A process's network namespace (`net:[inode]`), or undefined once it is gone. */
function networkNamespace(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/net`)
  } catch {
    return undefined
  }
}

/** One word for a POSIX shell, as it is. */
function quoted(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`
}

/** Create the namespace, keys and config, and start sshd; resolves once it listens. */
export async function startSshHost(options: SshHostOptions = {}): Promise<SshHost> {
  const index = options.index ?? 0
  const port = options.port ?? 2222
  if (!Number.isInteger(index) || index < 0 || index > 49) throw new Error(`ssh host index ${index} is out of 0–49`)
  const tag = process.pid % 100_000
  const namespace = `dsh-ssh-${tag}-${index}`
  const outer = `dshs${tag}x${index}h`
  const inner = `dshs${tag}x${index}t`
  // A /30 of this process's own per index: 10.(200+index).hi.lo, two processes apart unless their pids agree mod 16384.
  const slot = process.pid % 16_384
  const base = `10.${200 + index}.${slot >> 6}`
  const low = (slot & 63) * 4
  const address = `${base}.${low + 2}`
  const dir = mkdtempSync(join(tmpdir(), 'dsh-ssh-host-'))
  const removeLinks = () => {
    for (const args of [
      ['netns', 'del', namespace],
      ['link', 'del', outer],
    ]) {
      try {
        ip(...args)
      } catch {}
    }
  }
  let watchdog: ChildProcess | undefined
  try {
    removeLinks() // a namespace of an earlier, killed run with this pid
    const config = writeKeysAndConfig(dir, address, port)
    ip('netns', 'add', namespace)
    ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner)
    ip('link', 'set', inner, 'netns', namespace)
    ip('addr', 'add', `${base}.${low + 1}/30`, 'dev', outer)
    ip('link', 'set', outer, 'up')
    ip('netns', 'exec', namespace, 'ip', 'addr', 'add', `${address}/30`, 'dev', inner)
    ip('netns', 'exec', namespace, 'ip', 'link', 'set', inner, 'up')
    ip('netns', 'exec', namespace, 'ip', 'link', 'set', 'lo', 'up')
    mkdirSync('/run/sshd', { recursive: true })
    watchdog = spawn('sh', ['-c', WATCHDOG, 'ssh-host', namespace, config, outer, dir], { stdio: ['pipe', 'pipe', 'pipe'] })
    const sshdPid = await listening(watchdog)
    const ssh = [
      'ssh',
      '-F',
      'none',
      '-i',
      join(dir, 'client_key'),
      '-p',
      String(port),
      '-o',
      'BatchMode=yes',
      '-o',
      'StrictHostKeyChecking=yes',
      '-o',
      `UserKnownHostsFile=${join(dir, 'known_hosts')}`,
      '-o',
      'GlobalKnownHostsFile=/dev/null',
      '-o',
      `ServerAliveInterval=${options.serverAliveSeconds ?? 30}`,
      '-o',
      'ServerAliveCountMax=3',
      '-o',
      'ConnectTimeout=10',
      '-o',
      'LogLevel=ERROR',
      '-T',
      `root@${address}`,
    ]
    const running = watchdog
    return {
      namespace,
      address,
      port,
      sshdPid,
      ssh,
      connect: (remote) => [...ssh, '--', ...remote.map(quoted)],
      served: () => descendants(sshdPid).map((member) => member.pid),
      processes: () => namespacePids(namespace),
      runsHere: (pid) => {
        const here = networkNamespace(sshdPid)
        return here !== undefined && networkNamespace(pid) === here
      },
      cut: () => ip('link', 'set', outer, 'down'),
      restore: () => ip('link', 'set', outer, 'up'),
      stop: () => ended(running),
    }
  } catch (error) {
    if (watchdog) await ended(watchdog)
    removeLinks()
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
}

/**
 * Host key, client key (`client_key`), authorized_keys, known_hosts and sshd_config in `dir`, for an
 * sshd of a test's own on `address`:`port`; answers the config's path. The one place these are made.
 */
export function writeKeysAndConfig(dir: string, address: string, port: number): string {
  for (const key of ['host_key', 'client_key']) execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', key, '-f', join(dir, key)])
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(join(dir, 'client_key.pub')))
  const hostKey = readFileSync(join(dir, 'host_key.pub'), 'utf8').trim().split(' ').slice(0, 2).join(' ')
  writeFileSync(join(dir, 'known_hosts'), `[${address}]:${port} ${hostKey}\n`)
  const config = join(dir, 'sshd_config')
  writeFileSync(
    config,
    [
      `Port ${port}`,
      `ListenAddress ${address}`,
      `HostKey ${join(dir, 'host_key')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'PermitRootLogin prohibit-password',
      'StrictModes no',
      'PidFile none',
      'UseDNS no',
      'PrintMotd no',
      'PrintLastLog no',
      // A client gone silent for 30 s is dropped, so a session host behind a link cut for good ends.
      'ClientAliveInterval 10',
      'ClientAliveCountMax 3',
      // Multiplexed sessions over one ControlMaster connection, and parallel logins of a bench.
      'MaxSessions 64',
      'MaxStartups 64:30:128',
      '',
    ].join('\n'),
  )
  return config
}

/** sshd's pid, once its log says it listens; rejects with its output when the watchdog ends first. */
function listening(watchdog: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let output = ''
    let pid: number | undefined
    const read = (chunk: string) => {
      // Keep reading for the host's life (a full pipe would stall sshd's log), keeping only a tail.
      output = (output + chunk).slice(-4096)
      pid ??= Number(/^sshd (\d+)$/m.exec(output)?.[1]) || undefined
      if (pid !== undefined && /Server listening on /.test(output)) resolve(pid)
    }
    watchdog.stdout?.setEncoding('utf8').on('data', read)
    watchdog.stderr?.setEncoding('utf8').on('data', read)
    watchdog.once('exit', (code) => reject(new Error(`sshd for the ssh host did not start (${code}): ${output}`)))
  })
}

/** End the watchdog's stdin and wait until it removed everything. */
function ended(watchdog: ChildProcess): Promise<void> {
  if (watchdog.exitCode !== null || watchdog.signalCode !== null) return Promise.resolve()
  const exit = new Promise<void>((resolve) => watchdog.once('exit', () => resolve()))
  watchdog.stdin?.end()
  return exit
}
