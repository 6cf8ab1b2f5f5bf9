import { Context } from '@deepseek-ai/cordis'
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HOST_RUNTIME_PARENT, type SandboxPolicy } from 'dsh-sandbox'
import * as localPlugin from 'dsh-sandbox-local'
import type { EgressRefusal } from 'dsh-sandbox-local'
import { type FarHost, installed, startFarHost } from 'dsh-testkit'
import { MAX_EGRESS_CONNECTIONS } from 'dsh-sandbox-local/internal'
import { bwrapUnavailable, DEADLINE_MS, type RunResult, scratchDir } from './helpers'
import { httpProbe, type ProbeRequest, RAW_CLIENT, socksProbe } from './egress-attack-requests'

/*
 * Attacks on the allowlist network from inside real sandboxes, as root: raw requests through the
 * in-sandbox forwarder (each printed back as one escaped line), the proxy's socket held by one
 * session, the host's own addresses and sockets. Each test asserts the SAFE behaviour: the ones
 * that fail today are holes (listed in the branch's report), the ones that pass are defences that held.
 */

const canRun = bwrapUnavailable === undefined && process.getuid?.() === 0 && ['ip', 'curl', 'perl'].every((program) => installed(program))

describe.skipIf(!canRun)('attacks on the allowlist network from inside a sandbox', () => {
  const root = new Context()
  let fiber: Awaited<ReturnType<Context['plugin']>> | undefined
  const refusals: EgressRefusal[] = []
  let far: FarHost
  let hostSide = ''
  let workspace: Awaited<ReturnType<typeof scratchDir>>
  const visits = { loopback: 0, anyAddress: 0, abstract: 0 }
  const servers: Server[] = []
  let loopbackPort = 0
  let anyAddressPort = 0
  const abstractName = `dsh-egress-attack-${process.pid}`

  /** A TCP server of the host's that counts who reached it. */
  async function hostServer(host: string, count: () => void): Promise<number> {
    const server = createServer((socket) => {
      count()
      // Read to the end, so the connection closes when the proxy's side does.
      socket.on('error', () => socket.destroy()).resume()
      socket.end('HTTP/1.0 200 OK\r\n\r\nHOST-SERVICE\n')
    })
    servers.push(server)
    await new Promise<void>((resolve) => server.listen(0, host, resolve))
    return (server.address() as { port: number }).port
  }

  beforeAll(async () => {
    workspace = await scratchDir('egress-attacks')
    writeFileSync(join(workspace.path, 'raw.pl'), RAW_CLIENT)
    far = await startFarHost()
    // The host's own end of the veth pair: an address of this host that is not loopback.
    hostSide = far.address.replace(/\.2$/, '.1')
    loopbackPort = await hostServer('127.0.0.1', () => (visits.loopback += 1))
    anyAddressPort = await hostServer('0.0.0.0', () => (visits.anyAddress += 1))
    const abstract = createServer((socket) => {
      visits.abstract += 1
      socket.end('HOST-ABSTRACT\n')
    })
    servers.push(abstract)
    await new Promise<void>((resolve) => abstract.listen(`\0${abstractName}`, resolve))
    fiber = await root.plugin(localPlugin, {
      egressAddresses: { 'allowed.test': far.address, 'refused.test': far.address, 'self.test': hostSide, 'other.test': far.address },
    })
    root.on('sandbox/egress-refused', (refusal) => {
      refusals.push(refusal)
    })
  }, 30_000)

  afterAll(async () => {
    await fiber?.dispose()
    await far?.stop()
    for (const server of servers) await new Promise((resolve) => server.close(resolve))
    await workspace?.remove()
  })

  const policy = (allowedHosts = ['allowed.test', '*.wild.test', 'self.test', 'localhost']): SandboxPolicy => ({
    mode: 'workspace-write',
    workspaceRoot: workspace.path,
    network: 'allowlist',
    allowedHosts,
  })

  /** Start `script` confined under `confinedBy`, with the environment the provider asks for. */
  async function start(script: string, confinedBy = policy()): Promise<ChildProcessWithoutNullStreams> {
    const [command = '', ...args] = await root.sandbox.confine(['bash', '-c', script], confinedBy)
    return spawn(command, args, { env: { ...process.env, ...root.sandbox.environment?.(confinedBy) } })
  }

  async function confined(script: string, confinedBy = policy()): Promise<RunResult> {
    const child = await start(script, confinedBy)
    child.stdin.end()
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    return new Promise((resolve, reject) => {
      child.on('error', reject)
      child.on('close', (code) => resolve({ code, stdout, stderr }))
    })
  }

  /** Send each request raw through the in-sandbox forwarder; the answers, one escaped line each. */
  async function probe(requests: readonly ProbeRequest[], confinedBy = policy()): Promise<string[]> {
    const script = requests.map((request) => `perl '${join(workspace.path, 'raw.pl')}' ${request.hex}`).join('\n')
    const result = await confined(script, confinedBy)
    const lines = result.stdout.split('\n').slice(0, requests.length)
    expect(lines, result.stderr).toHaveLength(requests.length)
    return lines
  }

  const FORBIDDEN_403 = /^HTTP\/1\.1 403 Forbidden by the dsh-terminal egress allowlist: /
  const socksReply = (line: string) => line.slice(0, 16) // "\x05\x00" (no authentication), then the reply's version and code

  it("numeric, mapped and spelled-out forms of the host's loopback are refused in CONNECT, absolute URIs and SOCKS5 (every address type)", async () => {
    refusals.length = 0
    const port = loopbackPort
    const connects = ['2130706433', '0x7f.1', '127.1', '0177.0.0.1', '[::ffff:7f00:1]', '[0:0:0:0:0:ffff:127.0.0.1]', '[::1]', '0.0.0.0', '169.254.169.254']
    const names = ['localhost.', 'LOCALHOST', 'localhost..']
    const absolute = ['2130706433', '0x7f.1', '127.1', '[::ffff:7f00:1]', '[0:0:0:0:0:ffff:127.0.0.1]', 'localhost.', '0', '[::]']
    const requests = [
      ...[...connects, ...names].map((host) => httpProbe(`CONNECT ${host}:${port} HTTP/1.1\r\nHost: ${host}:${port}\r\n\r\n`)),
      ...absolute.map((host) => httpProbe(`GET http://${host}:${port}/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n`)),
      socksProbe({ ipv4: [127, 0, 0, 1] }, port),
      socksProbe({ ipv4: [169, 254, 169, 254] }, 80),
      socksProbe({ ipv6: '0000:0000:0000:0000:0000:0000:0000:0001' }, port),
      socksProbe({ ipv6: '0000:0000:0000:0000:0000:ffff:7f00:0001' }, port),
      ...['2130706433', '127.0.0.1', 'localhost', 'localhost.', '[::1]', '::ffff:127.0.0.1'].map((name) => socksProbe({ name }, port)),
    ]
    const lines = await probe(requests)
    const httpCount = connects.length + names.length + absolute.length
    for (const [index, line] of lines.slice(0, httpCount).entries()) expect(line, requests[index]!.label).toMatch(FORBIDDEN_403)
    for (const [index, line] of lines.slice(httpCount).entries()) expect(socksReply(line), requests[httpCount + index]!.label).toBe('\\x05\\x00\\x05\\x02')
    expect(visits.loopback).toBe(0)
    expect(refusals).toHaveLength(requests.length)
  })

  it('a name with a NUL byte under a listed wildcard is refused, not resolved as the address before the NUL', async () => {
    const target = `${far.address}\0.wild.test`
    const lines = await probe([
      socksProbe({ name: target }, 8080, 'GET /nul-socks HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
      httpProbe(`CONNECT ${target}:8080 HTTP/1.1\r\n\r\nGET /nul-connect HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
    ])
    expect(socksReply(lines[0]!)).toBe('\\x05\\x00\\x05\\x02')
    expect(lines[1]).toMatch(/^HTTP\/1\.1 (400|403) /)
    expect(lines.join('\n')).not.toContain('far host')
  })

  it("a listed name that resolves to one of the host's own non-loopback addresses does not reach the host's services", async () => {
    visits.anyAddress = 0
    const result = await confined(
      [
        `curl -sS http://self.test:${anyAddressPort}/; echo "forward=$?"`,
        `curl -sS --proxytunnel http://self.test:${anyAddressPort}/ 2>&1; echo "tunnel=$?"`,
      ].join('\n'),
    )
    expect(result.stdout).not.toContain('HOST-SERVICE')
    expect(result.stdout).toContain('self.test')
    expect(visits.anyAddress).toBe(0)
  })

  it('a forwarded request reaches the origin with the Host of its URL, not a Host the client chose (no fronting to an unlisted name)', async () => {
    const result = await confined("curl -sS -H 'Host: refused.test' http://allowed.test:8080/fronted")
    expect(result.stdout).toBe('far host: GET /fronted for allowed.test:8080')
  })

  it('userinfo, pipelined and smuggled requests never reach an unlisted name', async () => {
    const closing = 'Connection: close\r\n\r\n'
    const lines = await probe([
      httpProbe(`GET http://allowed.test@refused.test:8080/userinfo HTTP/1.1\r\n${closing}`),
      httpProbe(`GET http://allowed.test:8080@refused.test:8080/userinfo HTTP/1.1\r\n${closing}`),
      httpProbe(
        `GET http://allowed.test:8080/one HTTP/1.1\r\nHost: allowed.test:8080\r\n\r\nGET http://refused.test:8080/two HTTP/1.1\r\nHost: refused.test\r\n\r\n`,
      ),
      httpProbe(
        `POST http://allowed.test:8080/smuggle HTTP/1.1\r\nHost: allowed.test:8080\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /two HTTP/1.1\r\nHost: refused.test\r\n\r\n`,
      ),
      httpProbe(`CONNECT allowed.test:8080 HTTP/1.1\r\n\r\nGET /tunnel HTTP/1.1\r\nHost: allowed.test\r\n\r\nCONNECT refused.test:8080 HTTP/1.1\r\n\r\n`),
    ])
    expect(lines[0]).toMatch(/^HTTP\/1\.1 403 Forbidden by the dsh-terminal egress allowlist: refused\.test/)
    expect(lines[1]).toMatch(/^HTTP\/1\.1 403 Forbidden by the dsh-terminal egress allowlist: refused\.test/)
    expect(lines[2]).toContain('far host: GET /one for allowed.test:8080')
    expect(lines.join('\n')).not.toContain('/two')
    expect(lines.join('\n')).not.toContain('for refused.test')
    expect(lines[4]).toContain('far host: GET /tunnel for allowed.test')
  })

  it('malformed CONNECT lines, an HTTP/2 preface, SOCKS4 and SOCKS5 BIND / UDP ASSOCIATE get an error and reach nothing', async () => {
    const lines = await probe([
      httpProbe('CONNECT  allowed.test:8080 HTTP/1.1\r\n\r\n'),
      httpProbe('CONNECT allowed.test:8080  HTTP/1.1\r\n\r\n'),
      httpProbe('CONNECT\tallowed.test:8080 HTTP/1.1\r\n\r\n'),
      httpProbe('connect refused.test:8080 HTTP/1.1\r\n\r\n'),
      httpProbe('CONNECT allowed.test:8080@refused.test:8080 HTTP/1.1\r\n\r\n'),
      httpProbe('CONNECT refused.test:8080 HTTP/1.1\r\nHost: allowed.test:8080\r\n\r\n'),
      httpProbe('CONNECT refused.test:8080 HTTP/1.0 \r\n\r\n'),
      httpProbe('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
      httpProbe('GET http://allowed.test:8080/h2 HTTP/2.0\r\n\r\n'),
      {
        label: 'socks4',
        hex: Buffer.concat([Buffer.from([4, 1, 0x1f, 0x90]), Buffer.from(far.address.split('.').map(Number)), Buffer.from('x\0')]).toString('hex'),
      },
      socksProbe({ name: 'allowed.test' }, 8080, '', 2),
      socksProbe({ name: 'allowed.test' }, 8080, '', 3),
    ])
    for (const line of lines.slice(0, 9)) expect(line).toMatch(/^HTTP\/1\.1 (400|403) /)
    // SOCKS4 is rejected at once (reply 0x5B), nothing reached.
    expect(lines[9]).toBe('\\x00[\\x00\\x00\\x00\\x00\\x00\\x00')
    expect(lines[5]).toMatch(/403 Forbidden by the dsh-terminal egress allowlist: refused\.test/)
    for (const line of lines.slice(10)) expect(socksReply(line)).toBe('\\x05\\x00\\x05\\x07')
    expect(lines.join('\n')).not.toContain('far host')
  })

  it("the sandbox cannot leave its network namespace, reach the host's abstract sockets, write the proxy's directory or find another proxy", async () => {
    // Another allowlist's proxy, started by a sandbox of its own.
    await root.sandbox.confine(['true'], policy(['other.test']))
    const proxySockets = readdirSync(HOST_RUNTIME_PARENT)
      .filter((entry) => entry.startsWith('egress-'))
      .map((entry) => join(HOST_RUNTIME_PARENT, entry, 'proxy.sock'))
      .filter((path) => existsSync(path))
    expect(proxySockets.length).toBeGreaterThanOrEqual(2)
    visits.abstract = 0
    const result = await confined(
      [
        'ip link add dshattack0 type dummy 2>/dev/null; echo "link=$?"',
        'unshare -n true 2>/dev/null; echo "unshare=$?"',
        'touch /tmp/.dsh-egress/x 2>/dev/null; echo "write=$?"',
        'mount -o remount,rw /tmp/.dsh-egress 2>/dev/null; echo "remount=$?"',
        'umount /tmp/.dsh-egress 2>/dev/null; echo "umount=$?"',
        'ls -A /tmp/.dsh-egress | tr "\\n" " "; echo',
        `perl -MIO::Socket::UNIX -e 'print IO::Socket::UNIX->new(Peer => "\\0${abstractName}") ? "abstract=reached\\n" : "abstract=unreachable\\n"'`,
        ...proxySockets.map((path) => `[ -e '${path}' ] && echo "visible ${path}" || echo hidden`),
        // Only this sandbox's own proxy connection may show (its hold), never another proxy's.
        'echo "unix: $(grep -o "/tmp/dsh-terminal/[^ ]*" /proc/net/unix | sort -u | tr "\\n" " ")"',
      ].join('\n'),
    )
    const lines = result.stdout.trim().split('\n')
    expect(lines.slice(0, 7)).toEqual(['link=2', 'unshare=1', 'write=1', 'remount=32', 'umount=32', 'connect proxy.sock ', 'abstract=unreachable'])
    expect(lines.slice(7, -1)).toEqual(proxySockets.map(() => 'hidden'))
    expect(lines.at(-1)).toMatch(/^unix:/)
    const shown = (lines.at(-1) ?? '').slice('unix:'.length).split(' ').filter(Boolean)
    expect(shown.length).toBeLessThanOrEqual(1)
    for (const path of shown) expect(proxySockets).not.toContain(path)
    expect(visits.abstract).toBe(0)
  })

  it('a read-only workspace of / (which is not bound again) still gets its own proxy at /tmp/.dsh-egress, read-only', async () => {
    const readOnlyRoot: SandboxPolicy = { mode: 'read-only', workspaceRoot: '/', network: 'allowlist', allowedHosts: ['allowed.test'] }
    const result = await confined(
      [
        'ls -A /tmp/.dsh-egress 2>&1 | tr "\\n" " "; echo',
        'curl -sS http://allowed.test:8080/root-workspace 2>&1; echo',
        'touch /tmp/.dsh-egress/x 2>/dev/null; echo "write=$?"',
      ].join('\n'),
      readOnlyRoot,
    )
    expect(result.stdout).toBe(['connect proxy.sock ', 'far host: GET /root-workspace for allowed.test:8080', 'write=1', ''].join('\n'))
  })

  describe('one session holding every connection its proxy accepts', () => {
    let holder: ChildProcessWithoutNullStreams
    let held = 0
    const release = () => join(workspace.path, 'release')

    beforeAll(async () => {
      // Straight to the proxy's socket (past the forwarder), more connections than the cap; held until `release` appears.
      const script = [
        `perl -MIO::Socket::UNIX -MSocket -e '`,
        'my @held; for (1..$ARGV[0]) { my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => "/tmp/.dsh-egress/proxy.sock") or last; push @held, $s }',
        'syswrite STDOUT, scalar(@held) . "\\n";',
        'for (1..400) { last if -e $ARGV[1]; select(undef, undef, undef, 0.05) }',
        `' ${MAX_EGRESS_CONNECTIONS + 44} '${release()}'`,
      ].join(' ')
      holder = await start(script)
      held = await new Promise<number>((resolve, reject) => {
        holder.stdout.setEncoding('utf8').once('data', (chunk: string) => resolve(Number(chunk.trim())))
        holder.once('close', () => reject(new Error('the holding session ended early')))
      })
    }, DEADLINE_MS)

    afterAll(async () => {
      writeFileSync(release(), '')
      if (holder.exitCode === null) await new Promise((resolve) => holder.once('close', resolve))
    })

    it('the proxy of another allowlist, and so the host, keeps serving', async () => {
      expect(held).toBeGreaterThan(MAX_EGRESS_CONNECTIONS)
      const result = await confined('curl -sS http://allowed.test:8080/other-proxy 2>&1', policy(['allowed.test', 'other.test']))
      expect(result.stdout).toBe('far host: GET /other-proxy for allowed.test:8080')
    })

    it('another session with the SAME allowlist still reaches an allowed host (the cap is not shared between sessions)', async () => {
      const result = await confined('curl -sS http://allowed.test:8080/same-proxy 2>&1; echo " [$?]"')
      expect(result.stdout).toBe('far host: GET /same-proxy for allowed.test:8080 [0]\n')
    })
  })
})
