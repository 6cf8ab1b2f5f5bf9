import { describe, expect, it } from 'vitest'
import { parseEpollTargets } from '../src/linux/fdinfo-parser'
import { parseStat } from '../src/linux/stat-parser'
import { parseDisposition, parseNamespacePid, parseSwitchCounters } from '../src/linux/status-parser'
import { parseSyscall } from '../src/linux/syscall-parser'
import { isStdinWaitSyscall, syscallTable } from '../src/linux/syscall-table'
import { parsePsLine, parsePsTable } from '../src/darwin/ps-parser'
import { localFlagBits, parseSttySettings } from '../src/modes/stty-parser'

const tail = '4194560 0 0 0 0 0 0 0 0 20 0 1 0 69122 3133440 414 18446744073709551615'

describe('parseStat', () => {
  it('parses past the last ")" so a comm with spaces and parentheses cannot shift fields', () => {
    const record = parseStat(`4242 (evil) S 1 2 (x)) T 7 4242 4242 34816 5000 ${tail}\n`)
    expect(record).toMatchObject({
      command: 'evil) S 1 2 (x)',
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

  it('reads SIGTERM/SIGHUP dispositions from the decimal masks of fields 32–34, when the line has them', () => {
    // An exec'd `sh -c 'trap "" TERM; trap "echo" INT; exec sleep'` (SIGINT, SIGQUIT, SIGTERM ignored), then interactive bash.
    const masks = (blocked: number, ignored: number, caught: number) => `${tail} 0 0 0 0 0 0 ${blocked} ${ignored} ${caught} 0 0 0 17 1 0 0 0 0 0`
    expect(parseStat(`5 (sleep) S 1 5 5 0 -1 ${masks(0, 16390, 0)}`)?.disposition).toEqual({ termIgnored: true, hupIgnored: false, termHandled: false })
    expect(parseStat(`5 (bash) S 1 5 5 0 -1 ${masks(65536, 3686404, 1266761467)}`)?.disposition).toEqual({
      termIgnored: true,
      hupIgnored: false,
      termHandled: false,
    })
    expect(parseStat(`5 (sh) S 1 5 5 0 -1 ${masks(2147221247, 0, 16386)}`)?.disposition).toEqual({ termIgnored: false, hupIgnored: true, termHandled: true })
    expect(parseStat(`5 (a) S 1 5 5 0 -1 ${masks(0, 0, 0)}`)?.disposition).toEqual({ termIgnored: false, hupIgnored: false, termHandled: false })
    // Short lines (fixtures) and malformed masks carry none: the caller reads `status` instead.
    expect(parseStat(`5 (a) S 1 5 5 0 -1 ${tail}`)?.disposition).toBeUndefined()
    expect(parseStat(`5 (a) S 1 5 5 0 -1 ${tail} 0 0 0 0 0 0 0 x 0 0 0 0 17 1 0 0 0 0 0`)?.disposition).toBeUndefined()
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
  it('maps the x86-64 and arm64 waits and the syscalls that take no terminal input', () => {
    expect(Object.fromEntries(syscallTable('x64')!)).toEqual({
      0: 'read',
      7: 'poll',
      23: 'select',
      232: 'epoll_wait',
      270: 'pselect6',
      271: 'ppoll',
      281: 'epoll_pwait',
      441: 'epoll_pwait2',
      34: 'pause',
      35: 'nanosleep',
      42: 'connect',
      43: 'accept',
      45: 'recvfrom',
      47: 'recvmsg',
      61: 'wait4',
      128: 'rt_sigtimedwait',
      130: 'rt_sigsuspend',
      202: 'futex',
      230: 'clock_nanosleep',
      247: 'waitid',
      288: 'accept4',
      449: 'futex_waitv',
    })
    expect(Object.fromEntries(syscallTable('arm64')!)).toEqual({
      63: 'read',
      72: 'pselect6',
      73: 'ppoll',
      22: 'epoll_pwait',
      441: 'epoll_pwait2',
      95: 'waitid',
      98: 'futex',
      101: 'nanosleep',
      115: 'clock_nanosleep',
      133: 'rt_sigsuspend',
      137: 'rt_sigtimedwait',
      202: 'accept',
      203: 'connect',
      207: 'recvfrom',
      212: 'recvmsg',
      242: 'accept4',
      260: 'wait4',
      449: 'futex_waitv',
    })
  })

  it('tells the stdin waits from the rest', () => {
    const names = [...syscallTable('x64')!.values()]
    expect(names.filter(isStdinWaitSyscall).sort()).toEqual(['epoll_pwait', 'epoll_pwait2', 'epoll_wait', 'poll', 'ppoll', 'pselect6', 'read', 'select'])
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
    expect(parseDisposition(status('0000000000384004', '0', '000000004b813efb'))).toEqual({ termIgnored: true, hupIgnored: false, termHandled: false })
    // TERM blocked with no handler: nothing would run on delivery.
    expect(parseDisposition(status('0', '0000000000004000', '0'))).toEqual({ termIgnored: true, hupIgnored: false, termHandled: false })
    // A shell blocking everything around fork while it traps TERM: still deserves the grace.
    expect(parseDisposition(status('0', 'fffffffffffbfeff', '0000000000004002'))).toEqual({ termIgnored: false, hupIgnored: true, termHandled: true })
    // Default dispositions: SIGTERM ends it on delivery, there is nothing to wait for.
    expect(parseDisposition(status('0', '0', '0'))).toEqual({ termIgnored: false, hupIgnored: false, termHandled: false })
    expect(parseDisposition('SigIgn:\t0\n')).toBeUndefined()
  })
})

describe('parseNamespacePid', () => {
  it("takes the innermost of several namespaces, nothing for the reader's own", () => {
    expect(parseNamespacePid('Name:\tpython3\nNSpid:\t48211\t5\nNSpgid:\t48211\t5\n')).toBe(5)
    expect(parseNamespacePid('NSpid:\t48211\t90\t3\n')).toBe(3)
    expect(parseNamespacePid('Name:\tbash\nNSpid:\t48211\n')).toBeUndefined()
    expect(parseNamespacePid('Name:\tbash\nPid:\t48211\n')).toBeUndefined()
    expect(parseNamespacePid(undefined)).toBeUndefined()
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
      command: undefined,
    })
    expect(parsePsLine('  700   501   700     0 Z+   Thu Jul 16 10:00:01 2026')?.zombie).toBe(true)
    expect(parsePsLine('  701   501   700     0 T    Thu Jul 16 10:00:01 2026')?.stopped).toBe(true)
  })

  it('takes the accounting name after lstart, spaces included', () => {
    expect(parsePsLine('  612   501   612   612 S+   Thu Jul 16 10:00:00 2026 python3.11')).toMatchObject({ pid: 612, command: 'python3.11' })
    expect(parsePsLine('  613   501   612   612 S+   Thu Jul 16 10:00:00 2026 Google Chrome He  ')?.command).toBe('Google Chrome He')
    expect(parsePsLine('  614   501   612   612 S+   Thu Jul 16 10:00:00 2026')?.command).toBeUndefined()
  })

  it('skips malformed lines', () => {
    expect(parsePsLine('PID PPID PGID TPGID STAT STARTED')).toBeUndefined()
    expect(parsePsLine('  12 1 12 0 S')).toBeUndefined()
    expect(parsePsLine('  12 1 12 0 S yesterday')).toBeUndefined()
    const table = parsePsTable('junk\n  12     1    12     0 S    Thu Jul 16 10:00:00 2026\n\n')
    expect([...table.keys()]).toEqual([12])
  })
})

describe('stty -g parsing', () => {
  const linux = localFlagBits('linux', 'x64')!
  const mac = localFlagBits('darwin', 'arm64')!
  // Captured from GNU stty 9.1 on this host: bash's readline, `read -s`, and `read -n1`.
  const READLINE = '2c02:5:4bf:8a31:3:1c:7f:15:4:0:1:0:11:13:1a:ff:12:0:17:0:ff:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0'
  const READ_S = '2d02:5:4bf:8a13:3:1c:7f:15:4:0:1:0:11:13:1a:ff:12:f:17:16:ff:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0'
  const READ_N1 = '2d02:5:4bf:8a39:3:1c:7f:15:4:0:1:0:11:13:1a:ff:12:f:17:16:ff:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0'
  // BSD stty's format (gprint in bin/stty/gfmt.c): a canonical, echoing terminal, then echo off.
  const BSD =
    'gfmt1:cflag=4b00:iflag=6b02:lflag=200005cb:oflag=3:discard=f:dsusp=19:eof=4:eol=ff:eol2=ff:erase=7f:intr=3:kill=15:lnext=16:min=1:quit=1c:reprint=12:start=11:status=14:stop=13:susp=1a:time=0:werase=17:ispeed=9600:ospeed=9600'

  it('reads ECHO and ICANON from the fourth field of GNU and busybox output', () => {
    expect(parseSttySettings(`${READLINE}\n`, linux)).toEqual({ echo: false, canonical: false })
    expect(parseSttySettings(READ_S, linux)).toEqual({ echo: false, canonical: true })
    expect(parseSttySettings(READ_N1, linux)).toEqual({ echo: true, canonical: false })
    expect(parseSttySettings('500:5:bf:8a3b:3:1c:7f:15:4:0:1:0', linux)).toEqual({ echo: true, canonical: true })
  })

  it('reads lflag from BSD gfmt1 output with the BSD bits', () => {
    expect(parseSttySettings(BSD, mac)).toEqual({ echo: true, canonical: true })
    expect(parseSttySettings(BSD.replace('lflag=200005cb', 'lflag=200005c3'), mac)).toEqual({ echo: false, canonical: true })
    expect(parseSttySettings(BSD.replace('lflag=200005cb', 'lflag=200004cb'), mac)).toEqual({ echo: true, canonical: false })
  })

  it('knows the lflag layout per kernel, not per stty build', () => {
    expect(localFlagBits('linux', 'arm64')).toEqual(linux)
    expect(localFlagBits('linux', 'ppc64')).toEqual(mac)
    expect(localFlagBits('win32', 'x64')).toBeUndefined()
  })

  it.each([
    ['nothing', undefined],
    ['an empty line', '\n'],
    ['an error message', 'stty: /dev/pts/9: No such file or directory'],
    ['too few fields', '2c02:5:4bf'],
    ['a non-hex field', '2c02:5:4bf:8a3z:3:1c'],
    ['gfmt1 without lflag', 'gfmt1:cflag=4b00:iflag=6b02'],
  ])('treats %s as unreadable', (_label, text) => {
    expect(parseSttySettings(text, linux)).toBeUndefined()
  })
})
