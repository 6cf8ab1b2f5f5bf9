import { existsSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseHostPattern } from 'dsh-sandbox'
import type { EgressRefusal } from 'dsh-sandbox-local'
import { EgressProxy, forbiddenAddress, hostInterfaceAddresses, parseHostsFile, printable } from 'dsh-sandbox-local/internal'
import { eventually } from 'dsh-testkit'
import { scratchDir } from './helpers'

/*
 * The proxy's own edges, spoken to directly on its Unix socket (no sandbox, no upstream): what a
 * malformed, oversized or unsupported request gets, in each protocol, and the address rule.
 */

/** Send `request` and collect everything until the proxy closes (or `until` matches). */
function exchange(socketPath: string, request: Buffer | string, until?: (received: Buffer) => boolean): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath)
    let received = Buffer.alloc(0)
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk])
      if (until?.(received)) {
        socket.destroy()
        resolve(received)
      }
    })
    socket.on('error', reject)
    socket.on('close', () => resolve(received))
    socket.write(request)
  })
}

describe('the egress proxy on its socket', () => {
  let directory: Awaited<ReturnType<typeof scratchDir>>
  let proxy: EgressProxy
  const refusals: EgressRefusal[] = []

  beforeAll(async () => {
    directory = await scratchDir('egress-proxy')
    proxy = await EgressProxy.start({
      socketPath: join(directory.path, 'proxy.sock'),
      patterns: ['listed.test', '::1', '169.254.169.254'].map((entry) => parseHostPattern(entry)),
      fixedAddresses: { 'listed.test': '127.0.0.2' },
      onRefused: (refusal) => refusals.push(refusal),
    })
  })

  afterAll(async () => {
    await proxy?.close()
    await directory?.remove()
  })

  it('HTTP: a request head past the limit gets 431, a request that is not for a proxy 400, each with a reason', async () => {
    const long = await exchange(proxy.socketPath, `GET http://listed.test/ HTTP/1.1\r\nX-Long: ${'a'.repeat(40_000)}\r\n\r\n`)
    expect(long.toString()).toMatch(/^HTTP\/1\.1 431 /)
    const origin = await exchange(proxy.socketPath, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    expect(origin.toString()).toMatch(/^HTTP\/1\.1 400 .*needs an absolute http:\/\/ URL/s)
    const tls = await exchange(proxy.socketPath, 'GET https://listed.test/ HTTP/1.1\r\n\r\n')
    expect(tls.toString()).toMatch(/^HTTP\/1\.1 400 .*use CONNECT for https/s)
    const noPort = await exchange(proxy.socketPath, 'CONNECT listed.test HTTP/1.1\r\n\r\n')
    expect(noPort.toString()).toMatch(/^HTTP\/1\.1 400 .*CONNECT needs host:port/s)
    const garbage = await exchange(proxy.socketPath, 'hello there\r\n\r\n')
    expect(garbage.toString()).toMatch(/^HTTP\/1\.1 400 .*not an HTTP\/1\.x request line/s)
  })

  it("HTTP: a listed name or address that is the host's own, or link-local, is refused as FORBIDDEN_ADDRESS", async () => {
    refusals.length = 0
    for (const target of ['listed.test:80', '[::1]:80', '169.254.169.254:80']) {
      const answer = await exchange(proxy.socketPath, `CONNECT ${target} HTTP/1.1\r\n\r\n`)
      expect(answer.toString()).toMatch(/^HTTP\/1\.1 403 Forbidden by the dsh-terminal egress allowlist/)
    }
    expect(refusals.map((refusal) => refusal.reason)).toEqual(['FORBIDDEN_ADDRESS', 'FORBIDDEN_ADDRESS', 'FORBIDDEN_ADDRESS'])
  })

  it('SOCKS5: no acceptable method, an unsupported command or address type, and a refusal each get their reply code', async () => {
    const gotReply = (length: number) => (received: Buffer) => received.length >= length
    const userPassOnly = await exchange(proxy.socketPath, Buffer.from([5, 1, 2]))
    expect([...userPassOnly]).toEqual([5, 0xff])
    const name = Buffer.from('listed.test')
    const bind = await exchange(proxy.socketPath, Buffer.concat([Buffer.from([5, 1, 0, 5, 2, 0, 3, name.length]), name, Buffer.from([0, 80])]), gotReply(12))
    expect([...bind.subarray(2, 4)]).toEqual([5, 7])
    const unknownType = await exchange(proxy.socketPath, Buffer.from([5, 1, 0, 5, 1, 0, 9, 0, 80]), gotReply(12))
    expect([...unknownType.subarray(2, 4)]).toEqual([5, 8])
    const other = Buffer.from('other.test')
    const refused = await exchange(
      proxy.socketPath,
      Buffer.concat([Buffer.from([5, 1, 0, 5, 1, 0, 3, other.length]), other, Buffer.from([0, 80])]),
      gotReply(12),
    )
    expect([...refused.subarray(2, 4)]).toEqual([5, 2])
    const loopback = await exchange(proxy.socketPath, Buffer.from([5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, 0, 80]), gotReply(12))
    expect([...loopback.subarray(2, 4)]).toEqual([5, 2])
  })

  it('lives while its one hold is open: a second hold is dropped, the first one closing ends it; without one it ends by itself', async () => {
    const holdDirectory = await scratchDir('egress-hold')
    try {
      let closed = 0
      const held = await EgressProxy.start({
        socketPath: join(holdDirectory.path, 'held.sock'),
        patterns: [],
        fixedAddresses: {},
        onRefused: () => {},
        onClosed: () => (closed += 1),
      })
      const hold = connect(held.socketPath)
      hold.write(Buffer.from([0]))
      await new Promise((resolve) => hold.once('connect', resolve))
      // A second hold is cut at once (the proxy still serves, and still lives).
      expect((await exchange(held.socketPath, Buffer.from([0]))).length).toBe(0)
      expect((await exchange(held.socketPath, 'CONNECT other.test:80 HTTP/1.1\r\n\r\n')).toString()).toMatch(/^HTTP\/1\.1 403 /)
      expect(closed).toBe(0)
      hold.destroy()
      await eventually(() => closed === 1 && !existsSync(held.socketPath), 'the proxy to close with its hold')

      let expired = 0
      const unheld = await EgressProxy.start({
        socketPath: join(holdDirectory.path, 'unheld.sock'),
        patterns: [],
        fixedAddresses: {},
        onRefused: () => {},
        onClosed: () => (expired += 1),
        holdWithinMs: 50,
      })
      await eventually(() => expired === 1 && !existsSync(unheld.socketPath), 'a proxy never held to close by itself')
    } finally {
      await holdDirectory.remove()
    }
  })

  it('reads /etc/hosts as the system resolver would: comments dropped, aliases, names without case', () => {
    const table = parseHostsFile(
      '127.0.0.1 localhost\n# 10.0.0.1 commented.test\n10.0.0.7  Git.Internal  git  # the forge\nnot-an-address bad.test\n::1 localhost ip6-localhost\n',
    )
    expect(table.get('localhost')).toEqual(['127.0.0.1', '::1'])
    expect(table.get('git.internal')).toEqual(['10.0.0.7'])
    expect(table.get('git')).toEqual(['10.0.0.7'])
    expect(table.has('commented.test')).toBe(false)
    expect(table.has('bad.test')).toBe(false)
  })

  it("escapes what is unprintable in names it reports, and counts the host's own interface addresses as the host's", () => {
    expect(printable('evil.test\n[I] x\u001b[2J')).toBe('evil.test\\u{a}[I] x\\u{1b}[2J')
    const own = hostInterfaceAddresses()
    expect(own).toContain('127.0.0.1')
    for (const address of own) expect(forbiddenAddress(address), address).toBeDefined()
    expect(forbiddenAddress('10.99.0.1', ['10.99.0.1'])).toMatch(/an address of this host/)
    expect(forbiddenAddress('::ffff:10.99.0.1', ['10.99.0.1'])).toMatch(/an address of this host/)
  })

  it('the address rule: loopback, unspecified, link-local, multicast and mapped loopback are never reached', () => {
    for (const address of ['127.0.0.1', '127.1.2.3', '0.0.0.0', '169.254.169.254', '224.0.0.1', '::1', '::', 'fe80::1', '::ffff:127.0.0.1', 'ff02::1']) {
      expect(forbiddenAddress(address), address).toBeDefined()
    }
    for (const address of ['10.0.0.1', '192.168.1.1', '93.184.215.14', '2001:db8::1', '::ffff:10.0.0.1']) {
      expect(forbiddenAddress(address, []), address).toBeUndefined()
    }
  })
})
