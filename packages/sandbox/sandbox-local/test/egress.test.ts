import { Context, type Fiber } from '@deepseek-ai/cordis'
import { execFileSync, spawn } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SandboxPolicy } from 'dsh-sandbox'
import * as localPlugin from 'dsh-sandbox-local'
import type { EgressRefusal } from 'dsh-sandbox-local'
import { eventually, type FarHost, installed, startFarHost, writeKeysAndConfig } from 'dsh-testkit'
import { bwrapOptions, EgressProxies, EMPTY_MOUNT_PLAN, egressEnvironment, systemPerl, withForwarder } from 'dsh-sandbox-local/internal'
import { bwrapUnavailable, type RunResult, scratchDir } from './helpers'

/*
 * The allowlist network end to end, as root: real bwrap, the host's proxy, the in-sandbox
 * forwarder, and a far host in a network namespace of the test's own standing for the internet
 * (its names resolve through the proxy's `egressAddresses`). Allowed names answer through HTTP,
 * CONNECT and SOCKS5; everything else is refused with a line naming the host, and reported; no
 * raw socket leaves, and the host's loopback stays out of reach even for a listed name.
 */

const SSHD = '/usr/sbin/sshd'
const canRun =
  bwrapUnavailable === undefined && process.getuid?.() === 0 && ['ip', 'curl', SSHD, 'git', 'ssh', 'setpriv'].every((program) => installed(program))

/** The far host's sshd port, and what it serves: a git repository over ssh. */
const SSH_PORT = 2200

describe.skipIf(!canRun)('the allowlist network (real bwrap, a far host in a network namespace)', () => {
  const root = new Context()
  const refusals: EgressRefusal[] = []
  let provider: Fiber | undefined
  let far: FarHost
  let workspace: Awaited<ReturnType<typeof scratchDir>>
  let hostLoopback: Server
  let hostPort = 0
  let loopbackVisits = 0

  beforeAll(async () => {
    workspace = await scratchDir('egress')
    far = await startFarHost([{ argv: [SSHD, '-D', '-e', '-f', sshServer(workspace.path)], ready: /Server listening on 0\.0\.0\.0 port/ }])
    hostLoopback = createServer((socket) => {
      loopbackVisits += 1
      socket.end('HOST-LOOPBACK\n')
    })
    await new Promise<void>((resolve) => hostLoopback.listen(0, '127.0.0.1', resolve))
    hostPort = (hostLoopback.address() as { port: number }).port
    provider = await root.plugin(localPlugin, {
      egressAddresses: {
        'allowed.test': far.address,
        'refused.test': far.address,
        'deep.wild.test': far.address,
        'wild.test': far.address,
        'loop.test': '127.0.0.1',
      },
    })
    root.on('sandbox/egress-refused', (refusal) => {
      refusals.push(refusal)
    })
  }, 30_000)

  afterAll(async () => {
    // Unloading the provider stops every proxy and removes its directory (a start never spawned keeps one for 2 minutes).
    await provider?.dispose()
    await far?.stop()
    await new Promise((resolve) => hostLoopback?.close(resolve))
    await workspace?.remove()
  })

  const policy = (): SandboxPolicy => ({
    mode: 'workspace-write',
    workspaceRoot: workspace.path,
    network: 'allowlist',
    allowedHosts: ['allowed.test', '*.wild.test', 'loop.test', 'localhost'],
  })

  /** Run `script` confined under the allowlist policy, with the environment the provider asks for. */
  async function confined(script: string): Promise<RunResult> {
    const argv = await root.sandbox.confine(['bash', '-c', script], policy())
    return runWith(argv, { ...process.env, ...root.sandbox.environment?.(policy()) })
  }

  it('an allowed name answers through the HTTP proxy, a CONNECT tunnel and SOCKS5, and a wildcard covers its subdomains', async () => {
    const result = await confined(
      [
        'curl -sS http://allowed.test:8080/forwarded; echo " [$?]"',
        'curl -sS --proxytunnel http://allowed.test:8080/tunnelled; echo " [$?]"',
        'curl -sS --proxy "$ALL_PROXY" http://allowed.test:8080/socks; echo " [$?]"',
        'curl -sS http://deep.wild.test:8080/wildcard; echo " [$?]"',
      ].join('\n'),
    )
    expect(result.stderr).toBe('')
    expect(result.stdout).toBe(
      [
        'far host: GET /forwarded for allowed.test:8080 [0]',
        'far host: GET /tunnelled for allowed.test:8080 [0]',
        'far host: GET /socks for allowed.test:8080 [0]',
        'far host: GET /wildcard for deep.wild.test:8080 [0]',
        '',
      ].join('\n'),
    )
  })

  it('a name not on the list is refused in each protocol, with a line naming it, and reported', async () => {
    refusals.length = 0
    const result = await confined(
      [
        'curl -sS http://refused.test:8080/; echo "forward=$?"',
        'curl -sS --proxytunnel http://refused.test:8080/ 2>&1; echo "tunnel=$?"',
        'curl -sS --proxy "$ALL_PROXY" http://refused.test:8080/ 2>&1; echo "socks=$?"',
        // A wildcard covers subdomains only, never the bare domain.
        'curl -sS http://wild.test:8080/ | grep -c "not on this sandbox\'s egress allowlist"',
      ].join('\n'),
    )
    const lines = result.stdout.split('\n')
    expect(lines[0]).toContain("refused.test:80 is not on this sandbox's egress allowlist".replace(':80', ':8080'))
    expect(lines[0]).toContain('allowedHosts')
    expect(lines).toContain('forward=0')
    expect(result.stdout).toMatch(/CONNECT tunnel failed, response 403\n.*tunnel=56/s)
    expect(result.stdout).toMatch(/SOCKS5.*\n.*socks=97/s)
    expect(lines).toContain('1')
    expect(refusals.map(({ host, port, protocol, reason }) => ({ host, port, protocol, reason }))).toEqual([
      { host: 'refused.test', port: 8080, protocol: 'http', reason: 'NOT_ALLOWED' },
      { host: 'refused.test', port: 8080, protocol: 'http', reason: 'NOT_ALLOWED' },
      { host: 'refused.test', port: 8080, protocol: 'socks5', reason: 'NOT_ALLOWED' },
      { host: 'wild.test', port: 8080, protocol: 'http', reason: 'NOT_ALLOWED' },
    ])
  })

  it("no raw socket leaves, and the host's loopback stays out of reach, also by a listed name or address", async () => {
    refusals.length = 0
    loopbackVisits = 0
    const result = await confined(
      [
        `(exec 3<>/dev/tcp/${far.address}/8080) 2>/dev/null; echo "direct=$?"`,
        `(exec 3<>/dev/tcp/127.0.0.1/${hostPort}) 2>/dev/null; echo "loopback=$?"`,
        // Through the proxy: a listed name that resolves to the host's loopback, a listed `localhost`, a bare address.
        `curl -sS http://loop.test:${hostPort}/ | grep -c "loopback, link-local"`,
        `curl -sS --noproxy '' --proxytunnel http://localhost:${hostPort}/ 2>&1 | grep -c "response 403"`,
        `curl -sS --noproxy '' http://${far.address}:8080/ | grep -c "not on this sandbox's egress allowlist"`,
        // This network namespace's interfaces (/sys shows the host's).
        "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '",
      ].join('\n'),
    )
    expect(result.stdout).toBe(['direct=1', 'loopback=1', '1', '1', '1', 'lo', ''].join('\n'))
    expect(loopbackVisits).toBe(0)
    expect(refusals.map(({ host, reason }) => ({ host, reason }))).toEqual([
      { host: 'loop.test', reason: 'FORBIDDEN_ADDRESS' },
      { host: 'localhost', reason: 'FORBIDDEN_ADDRESS' },
      { host: far.address, reason: 'NOT_ALLOWED' },
    ])
  })

  it('the connect helper (the ProxyCommand git over ssh uses) relays a TCP stream to an allowed host and explains a refusal', async () => {
    const result = await confined(
      [
        'printf "ping\\n" | "$DSH_EGRESS_CONNECT" allowed.test 2222; echo "allowed=$?"',
        '"$DSH_EGRESS_CONNECT" refused.test 2222 </dev/null 2>&1; echo "refused=$?"',
        'echo "$GIT_SSH_COMMAND"',
      ].join('\n'),
    )
    const lines = result.stdout.split('\n')
    expect(lines.slice(0, 3)).toEqual(['FAR-TCP', 'ping', 'allowed=0'])
    expect(lines[3]).toContain("refused.test:2222 is not on this sandbox's egress allowlist")
    expect(lines[4]).toBe('refused=1')
    expect(lines[5]).toBe("ssh -o ProxyCommand='/tmp/.dsh-egress/connect %h %p'")
  })

  it('git clones over ssh from an allowed host, through GIT_SSH_COMMAND as the session gets it', async () => {
    const ssh = join(workspace.path, 'ssh')
    const hostKey = readFileSync(join(ssh, 'host_key.pub'), 'utf8').split(' ').slice(0, 2).join(' ')
    const result = await confined(
      [
        'mkdir -p ~/.ssh && chmod 700 ~/.ssh',
        `cp '${ssh}/client_key' ~/.ssh/id_ed25519 && chmod 600 ~/.ssh/id_ed25519`,
        `echo '[allowed.test]:${SSH_PORT} ${hostKey}' > ~/.ssh/known_hosts`,
        `git clone -q ssh://root@allowed.test:${SSH_PORT}${workspace.path}/remote.git "$HOME/clone" 2>&1 && cat "$HOME/clone/README"`,
        `git clone -q ssh://root@refused.test:${SSH_PORT}${workspace.path}/remote.git "$HOME/refused" 2>&1; echo "refused=$?"`,
      ].join('\n'),
    )
    const lines = result.stdout.split('\n')
    expect(lines[0]).toBe('cloned through the egress proxy')
    expect(result.stdout).toContain("refused.test:2200 is not on this sandbox's egress allowlist")
    expect(result.stdout).toContain('refused=128')
  })

  it('as an unprivileged user (setpriv nobody, bwrap in a user namespace) the proxy, the forwarder and the refusals hold alike', async () => {
    const NOBODY = 65534
    const base = await scratchDir('egress-nobody', '/var/tmp')
    chmodSync(base.path, 0o755)
    const own = (path: string) => {
      chownSync(path, NOBODY, NOBODY)
      for (const entry of readdirSync(path)) chownSync(join(path, entry), NOBODY, NOBODY)
    }
    const nobodyRefusals: EgressRefusal[] = []
    // The unprivileged host's own proxy: its directory and socket belong to that user.
    const proxies = new EgressProxies({
      runtimeParent: () => base.path,
      fixedAddresses: { 'allowed.test': far.address, 'refused.test': far.address },
      perl: systemPerl,
      onRefused: (refusal) => nobodyRefusals.push(refusal),
    })
    try {
      const egress = await proxies.open(['allowed.test'])
      own(egress.path)
      const ownWorkspace = join(base.path, 'ws')
      mkdirSync(ownWorkspace)
      own(ownWorkspace)
      const nobodyPolicy: SandboxPolicy = { mode: 'workspace-write', workspaceRoot: ownWorkspace, network: 'allowlist', allowedHosts: ['allowed.test'] }
      const plan = { ...EMPTY_MOUNT_PLAN, userNamespace: true, egress: { directory: egress.path, perl: systemPerl() } }
      const script = [
        'id -u',
        'curl -sS http://allowed.test:8080/nobody; echo',
        `curl -sS http://refused.test:8080/ | grep -c "not on this sandbox's egress allowlist"`,
        `(exec 3<>/dev/tcp/${far.address}/8080) 2>/dev/null; echo "direct=$?"`,
      ].join('\n')
      const variables = Object.entries({ HOME: '/tmp', ...egressEnvironment() }).map(([name, value]) => `${name}=${value}`)
      const argv = [
        'setpriv',
        `--reuid=${NOBODY}`,
        `--regid=${NOBODY}`,
        '--clear-groups',
        'env',
        ...variables,
        'bwrap',
        ...bwrapOptions(nobodyPolicy, plan),
        '--',
        ...withForwarder(systemPerl(), ['bash', '-c', script]),
      ]
      const result = await runWith(argv, process.env)
      expect(result.stdout).toBe([String(NOBODY), 'far host: GET /nobody for allowed.test:8080', '1', 'direct=1', ''].join('\n'))
      expect(nobodyRefusals.map(({ host, reason }) => ({ host, reason }))).toEqual([{ host: 'refused.test', reason: 'NOT_ALLOWED' }])
    } finally {
      await proxies.close()
      await base.remove()
    }
  })

  it('each sandbox has a proxy of its own: one that uses up its connections stalls no other, and its proxy ends with it', async () => {
    const release = join(workspace.path, 'release-hog')
    const hog = await root.sandbox.confine(
      [
        'bash',
        '-c',
        [
          // More connections than one proxy serves, all held open.
          'for i in $(seq 1 270); do exec {fd}<>/dev/tcp/127.0.0.1/3128 || break; done 2>/dev/null',
          'curl -sS -m 5 http://allowed.test:8080/hog >/dev/null 2>&1; echo "hog-curl=$?"',
          'echo held',
          `for i in $(seq 1 300); do [ -e '${release}' ] && break; sleep 0.1; done`,
        ].join('\n'),
      ],
      policy(),
    )
    const hogDirectory = hog[hog.indexOf('/tmp/.dsh-egress') - 1]!
    expect(hogDirectory).toMatch(/\/egress-[^/]+$/)
    const running = spawn(hog[0]!, hog.slice(1), { env: { ...process.env, ...root.sandbox.environment?.(policy()) }, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    running.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
    const exited = new Promise((resolve) => running.once('close', resolve))
    try {
      await eventually(() => output.includes('held\n'), 'the hog to hold its connections', 30_000)
      // Its own proxy is full: even its own request fails. Another sandbox's works.
      expect(output).not.toContain('hog-curl=0')
      const other = await confined('curl -sS http://allowed.test:8080/other; echo')
      expect(other.stdout).toBe('far host: GET /other for allowed.test:8080\n')
      expect(existsSync(hogDirectory)).toBe(true)
    } finally {
      writeFileSync(release, '')
      await exited
    }
    // The hog's sandbox ended: its forwarder's hold closed, and the proxy with its directory went.
    await eventually(() => !existsSync(hogDirectory), "the hog's proxy directory to go")
  }, 60_000)

  it("the proxy's directory is bound only into allowlist sandboxes, read-only, and the forwarder is not the shell's child", async () => {
    const other = await root.sandbox.confine(['bash', '-c', 'ls /tmp/.dsh-egress 2>&1; ls -d /tmp/dsh-terminal 2>&1'], {
      mode: 'workspace-write',
      workspaceRoot: workspace.path,
      network: 'none',
    })
    const elsewhere = await runWith(other, process.env)
    expect(elsewhere.stdout).toMatch(/^ls: cannot access '\/tmp\/\.dsh-egress': No such file or directory\nls: cannot access '\/tmp\/dsh-terminal'/)
    const inside = await confined('touch /tmp/.dsh-egress/x 2>/dev/null; echo "write=$?"; ps -o comm= --ppid $$; ps -o comm=,ppid= -C dsh-egress-forwarder')
    const lines = inside.stdout.trim().split('\n')
    expect(lines[0]).toBe('write=1')
    // The shell's only child is ps itself; the forwarder's parent is the sandbox's init (pid 1).
    expect(lines[1]).toBe('ps')
    expect(lines[2]).toMatch(/^dsh-egress-forw\s+1$/)
  })
})

/** An sshd for the far host (its keys, a bare repository with one commit) in `directory`; returns its config file. */
function sshServer(directory: string): string {
  const ssh = join(directory, 'ssh')
  mkdirSync(ssh, { mode: 0o700 })
  mkdirSync('/run/sshd', { recursive: true })
  const config = writeKeysAndConfig(ssh, '0.0.0.0', SSH_PORT)
  const work = join(directory, 'work')
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { stdio: 'ignore' })
  git('init', '-q', work)
  writeFileSync(join(work, 'README'), 'cloned through the egress proxy\n')
  git('-C', work, 'add', 'README')
  git('-C', work, 'commit', '-q', '-m', 'one')
  git('clone', '-q', '--bare', work, join(directory, 'remote.git'))
  return config
}

function runWith(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const [command = '', ...args] = argv
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}
