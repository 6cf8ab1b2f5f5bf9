import { describe, expect, it } from 'vitest'
import { parseEpollTargets } from '../src/linux/fdinfo-parser'
import { parseStat } from '../src/linux/stat-parser'
import { parseDisposition, parseSwitchCounters } from '../src/linux/status-parser'
import { parseSyscall } from '../src/linux/syscall-parser'
import { syscallTable } from '../src/linux/syscall-table'
import { parsePsLine, parsePsTable } from '../src/darwin/ps-parser'

const tail = '4194560 0 0 0 0 0 0 0 0 20 0 1 0 69122 3133440 414 18446744073709551615'

describe('parseStat', () => {
  it('parses past the last ")" so a comm with spaces and parentheses cannot shift fields', () => {
    const record = parseStat(`4242 (evil) S 1 2 (x)) T 7 4242 4242 34816 5000 ${tail}\n`)
    expect(record).toMatchObject({
      pid: 4242,
      ppid: 7,
      pgid: 4242,
      sid: 4242,
      ttyNr: 34816,
      tpgid: 5000,
      started: '69122',
      stopped: true,
      zombie: false,
      threads: 1,
    })
  })

  it('recognises zombies and dead tasks', () => {
    expect(parseStat(`5 (a b) Z 1 5 5 0 -1 ${tail}`)?.zombie).toBe(true)
    expect(parseStat(`5 (a b) X 1 5 5 0 -1 ${tail}`)?.zombie).toBe(true)
  })

  it.each([
    ['empty', ''],
    ['no parentheses', `5 a S 1 5 5 0 -1 ${tail}`],
    ['truncated', '5 (a) S 1 5 5 0'],
    ['non-numeric ppid', `5 (a) S x 5 5 0 -1 ${tail}`],
    ['two-letter state', `5 (a) SS 1 5 5 0 -1 ${tail}`],
    ['bad pid', `-5 (a) S 1 5 5 0 -1 ${tail}`],
    ['non-numeric starttime', `5 (a) S 1 5 5 0 -1 ${tail.replace('69122', 'abc')}`],
  ])('rejects a malformed line: %s', (_label, line) => {
    expect(parseStat(line)).toBeUndefined()
  })
})

describe('parseSyscall', () => {
  it('parses running, outside-a-syscall and blocked states', () => {
    expect(parseSyscall('running\n')).toEqual({ kind: 'running' })
    expect(parseSyscall('-1 0x7ffd5c3a0e28 0x7f8e2b0e9a7d\n')).toEqual({ kind: 'user' })
    expect(parseSyscall('270 0x1 0x7ffee16e2ed0 0x0 0x0 0x0 0x7ffee16e2e00 0x7ffee16e2dc0 0x7f82feda3aec\n')).toEqual({
      kind: 'syscall',
      nr: 270,
      args: [1n, 0x7ffee16e2ed0n, 0n, 0n, 0n, 0x7ffee16e2e00n],
    })
  })

  it.each([
    ['unreadable', undefined],
    ['empty', ''],
    ['too few fields', '0 0x0 0x1'],
    ['non-hex argument', '0 0x0 0x1 0x2 zz 0x4 0x5 0x6 0x7'],
    ['negative syscall', '-2 0x0 0x1 0x2 0x3 0x4 0x5 0x6 0x7'],
    ['garbage', 'sleeping'],
  ])('treats %s as a miss', (_label, text) => {
    expect(parseSyscall(text)).toBeUndefined()
  })
})

describe('syscallTable', () => {
  it('maps the x86-64 and arm64 waits', () => {
    expect(Object.fromEntries(syscallTable('x64')!)).toEqual({
      0: 'read',
      7: 'poll',
      23: 'select',
      232: 'epoll_wait',
      270: 'pselect6',
      271: 'ppoll',
      281: 'epoll_pwait',
      441: 'epoll_pwait2',
    })
    expect(Object.fromEntries(syscallTable('arm64')!)).toEqual({ 63: 'read', 72: 'pselect6', 73: 'ppoll', 22: 'epoll_pwait', 441: 'epoll_pwait2' })
  })

  it('has no table for other architectures', () => {
    for (const arch of ['ia32', 'arm', 'riscv64', 'ppc64', 's390x']) expect(syscallTable(arch)).toBeUndefined()
  })
})

describe('status parsing', () => {
  it('reads both context-switch counters or nothing', () => {
    expect(parseSwitchCounters('voluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t3\n')).toEqual({ voluntary: 12, nonvoluntary: 3 })
    expect(parseSwitchCounters('voluntary_ctxt_switches:\t12\n')).toBeUndefined()
    expect(parseSwitchCounters(undefined)).toBeUndefined()
  })

  it('judges SIGTERM/SIGHUP by ignore mask, and by block mask only without a handler', () => {
    const status = (ign: string, blk: string, cgt: string) => `SigBlk:\t${blk}\nSigIgn:\t${ign}\nSigCgt:\t${cgt}\n`
    // Interactive bash: TERM ignored, HUP caught.
    expect(parseDisposition(status('0000000000384004', '0', '000000004b813efb'))).toEqual({ termIgnored: true, hupIgnored: false })
    // TERM blocked with no handler: nothing would run on delivery.
    expect(parseDisposition(status('0', '0000000000004000', '0'))).toEqual({ termIgnored: true, hupIgnored: false })
    // A shell blocking everything around fork while it traps TERM: still deserves the grace.
    expect(parseDisposition(status('0', 'fffffffffffbfeff', '0000000000004002'))).toEqual({ termIgnored: false, hupIgnored: true })
    expect(parseDisposition('SigIgn:\t0\n')).toBeUndefined()
  })
})

describe('parseEpollTargets', () => {
  it('parses registrations with their inode', () => {
    const text =
      'pos:\t0\nflags:\t02000002\nmnt_id:\t17\nino:\t1038\ntfd:        3 events:       19 data:                3  pos:0 ino:d3f6 sdev:f\ntfd:       20 events:        4 data: 14  pos:0 ino:3 sdev:18\n'
    expect(parseEpollTargets(text)).toEqual([
      { fd: 3, events: 0x19, ino: 0xd3f6 },
      { fd: 20, events: 4, ino: 3 },
    ])
    expect(parseEpollTargets('pos:\t0\nflags:\t02\n')).toEqual([])
  })

  it('rejects a non-epoll or malformed fdinfo', () => {
    expect(parseEpollTargets(undefined)).toBeUndefined()
    expect(parseEpollTargets('garbage')).toBeUndefined()
    expect(parseEpollTargets('pos:\t0\ntfd: x events: 1 data: 0\n')).toBeUndefined()
  })
})

describe('ps parsing (macOS)', () => {
  it('parses lines with an lstart identity and normalises its padding', () => {
    expect(parsePsLine('  501     1   501   612 Ss   Thu Jul  6 10:00:00 2026')).toEqual({
      pid: 501,
      ppid: 1,
      pgid: 501,
      tpgid: 612,
      sid: undefined,
      ttyNr: undefined,
      started: 'Thu Jul 6 10:00:00 2026',
      zombie: false,
      stopped: false,
      threads: 1,
    })
    expect(parsePsLine('  700   501   700     0 Z+   Thu Jul 16 10:00:01 2026')?.zombie).toBe(true)
    expect(parsePsLine('  701   501   700     0 T    Thu Jul 16 10:00:01 2026')?.stopped).toBe(true)
  })

  it('skips malformed lines', () => {
    expect(parsePsLine('PID PPID PGID TPGID STAT STARTED')).toBeUndefined()
    expect(parsePsLine('  12 1 12 0 S')).toBeUndefined()
    expect(parsePsLine('  12 1 12 0 S yesterday')).toBeUndefined()
    const table = parsePsTable('junk\n  12     1    12     0 S    Thu Jul 16 10:00:00 2026\n\n')
    expect([...table.keys()]).toEqual([12])
  })
})
