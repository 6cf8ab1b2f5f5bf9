import { readdirSync } from 'node:fs'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseHostPattern } from 'dsh-sandbox'
import type { EgressRefusal } from 'dsh-sandbox-local'
import { type FarHost, installed, startFarHost } from 'dsh-testkit'
import { EgressProxy, MAX_EGRESS_CONNECTIONS } from 'dsh-sandbox-local/internal'
import { DEADLINE_MS, scratchDir } from './helpers'

/*
 * Attacks spoken straight to the egress proxy's socket, as root: floods, oversized and abandoned
 * handshakes, hosts spelled to forge log lines or break the address rule. The proxy runs in this
 * process, so its open descriptors show whether a bad client left anything behind. Each test
 * asserts the SAFE behaviour; the ones failing today are holes listed in the branch's report.
 */

const canRun = process.getuid?.() === 0 && installed('ip')

/** Open descriptors of this process (the proxy's sockets among them). */
const openDescriptors = () => readdirSync('/proc/self/fd').length

/** Resolve once `condition` holds, polling on the event loop; reject past the deadline. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const started = Date.now()
  while (!condition()) {
    if (Date.now() - started > DEADLINE_MS) throw new Error(`gave up waiting: ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe.skipIf(!canRun)('attacks on the egress proxy socket', () => {
  let directory: Awaited<ReturnType<typeof scratchDir>>
  let far: FarHost
  let proxy: EgressProxy
  let loopback: Server
  let loopbackPort = 0
  let loopbackVisits = 0
  const refusals: EgressRefusal[] = []

  beforeAll(async () => {
    directory = await scratchDir('egress-proxy-attacks')
    far = await startFarHost()
    loopback = createServer((socket) => {
      loopbackVisits += 1
      socket.on('error', () => socket.destroy()).resume()
      socket.end('HOST-LOOPBACK\n')
    })
    await new Promise<void>((resolve) => loopback.listen(0, '::', resolve))
    loopbackPort = (loopback.address() as { port: number }).port
    // Listed spellings of the host's own addresses: the address rule must refuse them all the same.
    const listed = ['allowed.test', '*.wild.test', '::ffff:127.0.0.1', '::', '0.0.0.0', '127.0.0.2', '::ffff:169.254.169.254', '0:0:0:0:0:0:0:1']
    proxy = await EgressProxy.start({
      socketPath: join(directory.path, 'proxy.sock'),
      patterns: listed.map((entry) => parseHostPattern(entry)),
      fixedAddresses: { 'allowed.test': far.address },
      onRefused: (refusal) => refusals.push(refusal),
    })
  }, 30_000)

  afterAll(async () => {
    await proxy?.close()
    await far?.stop()
    await new Promise((resolve) => loopback?.close(resolve))
    await directory?.remove()
  })

  /** Send `request`; everything the proxy answers until it closes, or until `enough` says so. */
  function exchange(request: Buffer | string, enough?: (answer: Buffer) => boolean, end = false): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const socket = connect(proxy.socketPath)
      let answer = Buffer.alloc(0)
      socket.on('data', (chunk) => {
        answer = Buffer.concat([answer, chunk])
        if (enough?.(answer)) socket.destroy()
      })
      socket.on('error', reject)
      socket.on('close', () => resolve(answer))
      socket.write(request)
      if (end) socket.end()
    })
  }

  /** A SOCKS5 greeting and CONNECT request for a name. */
  const socksName = (name: string, port: number) => {
    const bytes = Buffer.from(name, 'latin1')
    return Buffer.concat([Buffer.from([5, 1, 0, 5, 1, 0, 3, bytes.length]), bytes, Buffer.from([port >> 8, port & 0xff])])
  }
  const socksAnswered = (answer: Buffer) => answer.length >= 12

  it("listed IP entries that spell the host's loopback, unspecified or link-local addresses another way are still refused", async () => {
    refusals.length = 0
    loopbackVisits = 0
    const targets = ['[::ffff:7f00:1]', '[0:0:0:0:0:ffff:127.0.0.1]', '[::]', '0.0.0.0', '127.0.0.2', '[::ffff:a9fe:a9fe]', '[::1]']
    for (const target of targets) {
      const answer = await exchange(`CONNECT ${target}:${loopbackPort} HTTP/1.1\r\n\r\n`)
      expect(answer.toString('latin1'), target).toMatch(/^HTTP\/1\.1 403 Forbidden by the dsh-terminal egress allowlist/)
    }
    const mapped = Buffer.concat([
      Buffer.from([5, 1, 0, 5, 1, 0, 4]),
      Buffer.from('00000000000000000000ffff7f000001', 'hex'),
      Buffer.from([loopbackPort >> 8, loopbackPort & 0xff]),
    ])
    expect([...(await exchange(mapped, socksAnswered)).subarray(2, 4)]).toEqual([5, 2])
    expect(refusals.map((refusal) => refusal.reason)).toEqual(Array(targets.length + 1).fill('FORBIDDEN_ADDRESS'))
    expect(loopbackVisits).toBe(0)
  })

  it('a refused host spelled with line breaks or escape codes is reported on one line without control characters', async () => {
    refusals.length = 0
    const forged = 'evil.test\n[I] 2026-01-01 sandbox-local egress allowed: everything.test'
    expect([...(await exchange(socksName(forged, 443), socksAnswered)).subarray(2, 4)]).toEqual([5, 2])
    expect([...(await exchange(socksName('\u001b[2J\u001b[31mclear.test', 443), socksAnswered)).subarray(2, 4)]).toEqual([5, 2])
    expect((await exchange('CONNECT bell\u0007\u001bc.test:443 HTTP/1.1\r\n\r\n')).toString('latin1')).toMatch(/^HTTP\/1\.1 403 /)
    expect(refusals).toHaveLength(3)
    for (const refusal of refusals) {
      expect(refusal.detail).toMatch(/^[^\u0000-\u001f\u007f]*$/)
      expect(refusal.host).toMatch(/^[^\u0000-\u001f\u007f]*$/)
    }
  })

  it('a SOCKS5 name that is an IPv6 literal with a zone index gets reply 2 and is reported, not dropped in silence', async () => {
    refusals.length = 0
    const answer = await exchange(socksName('fe80::1%lo', 80), socksAnswered)
    expect([...answer.subarray(2, 4)]).toEqual([5, 2])
    expect(refusals.map((refusal) => refusal.host)).toEqual(['fe80::1%lo'])
  })

  it('a 1 GB request head is cut off at the limit with 431, the proxy stops reading it, and another client is served meanwhile', async () => {
    const gigabyte = 1024 ** 3
    const chunk = Buffer.alloc(1024 ** 2, 'a')
    const socket = connect(proxy.socketPath)
    let written = 0
    let answer = ''
    await new Promise<void>((resolve, reject) => {
      socket.on('error', reject)
      socket.on('data', (data: Buffer) => {
        answer += data.toString('latin1')
        resolve()
      })
      socket.on('close', () => resolve())
      const pump = () => {
        while (answer === '' && written < gigabyte) {
          written += chunk.length
          if (!socket.write(chunk)) {
            socket.once('drain', pump)
            return
          }
        }
      }
      socket.write('GET http://allowed.test/ HTTP/1.1\r\nX-Filler: ')
      pump()
    })
    const other = await exchange('CONNECT refused.test:443 HTTP/1.1\r\n\r\n')
    socket.destroy()
    expect(answer).toMatch(/^HTTP\/1\.1 431 /)
    expect(written).toBeLessThan(64 * 1024 ** 2)
    expect(other.toString('latin1')).toMatch(/^HTTP\/1\.1 403 /)
  })

  it('thousands of connections: the excess is closed at once, and once they go the proxy serves again with no descriptor left behind', async () => {
    const baseline = openDescriptors()
    const clients: Socket[] = []
    let closedEarly = 0
    for (let batch = 0; batch < 8; batch += 1) {
      await Promise.all(
        Array.from({ length: 250 }, () => {
          const socket = connect(proxy.socketPath)
          clients.push(socket)
          socket.on('close', () => (closedEarly += 1))
          return new Promise<void>((resolve) => {
            socket.once('connect', () => resolve())
            socket.once('error', () => resolve())
          })
        }),
      )
    }
    await until(() => closedEarly >= clients.length - MAX_EGRESS_CONNECTIONS, 'the proxy closes every connection past its cap')
    // At most the cap stays open (a connection of the previous test may still hold a slot).
    expect(clients.length - closedEarly).toBeLessThanOrEqual(MAX_EGRESS_CONNECTIONS)
    expect(clients.length - closedEarly).toBeGreaterThan(MAX_EGRESS_CONNECTIONS - 8)
    for (const socket of clients) socket.destroy()
    await until(() => openDescriptors() <= baseline, 'the proxy lets go of every descriptor')
    expect((await exchange('CONNECT refused.test:443 HTTP/1.1\r\n\r\n')).toString('latin1')).toMatch(/^HTTP\/1\.1 403 /)
  })

  it('clients that leave mid-handshake, mid-connect or half-close a tunnel leave no socket behind, here or upstream', async () => {
    const baseline = openDescriptors()
    const leaving = Array.from({ length: 100 }, () => {
      const socket = connect(proxy.socketPath)
      socket.on('error', () => {})
      socket.write('CONNECT allowed.test:2222 HTTP/1.1\r\n\r\n')
      socket.destroy()
      return new Promise((resolve) => socket.on('close', resolve))
    })
    // A SOCKS greeting that promises two methods and brings one, then the client's end.
    const halfGreetings = Array.from({ length: 100 }, () => exchange(Buffer.from([5, 2, 0]), undefined, true))
    const halfClosed = Array.from({ length: 100 }, () => exchange('CONNECT allowed.test:2222 HTTP/1.1\r\n\r\nping\n', undefined, true))
    await Promise.all(leaving)
    // Dropped without an answer: the greeting never completed.
    expect((await Promise.all(halfGreetings)).map((answer) => answer.length)).toEqual(Array(100).fill(0))
    const tunnels = await Promise.all(halfClosed)
    expect(new Set(tunnels.map((answer) => answer.toString('latin1')))).toEqual(new Set(['HTTP/1.1 200 Connection established\r\n\r\nFAR-TCP\nping\n']))
    await until(() => openDescriptors() <= baseline, 'the proxy lets go of every descriptor')
  })
})
