import { existsSync, readFileSync } from 'node:fs'
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SandboxError } from 'dsh-sandbox'
import {
  AUDIT_ARCH,
  CLONE_NAMESPACE_FLAGS,
  type Condition,
  encode,
  encodedSeccompProgram,
  ERRNO,
  filterFileName,
  filterGuard,
  HARMLESS_PERSONALITIES,
  installFilterFile,
  MAX_INSTRUCTIONS,
  REFUSED_IOCTLS,
  RESULT,
  SECCOMP_RULES,
  type SeccompArchitecture,
  seccompArchitecture,
  seccompProgram,
  SYSCALL_NUMBERS,
  X32_SYSCALL_BIT,
} from 'dsh-sandbox-local/internal'
import { runFilter } from './bpf-interpreter'
import { scratchDir } from './helpers'

const ARCHITECTURES: readonly SeccompArchitecture[] = ['x86_64', 'aarch64']
const EPERM = RESULT.errno | ERRNO.EPERM
const ENOSYS = RESULT.errno | ERRNO.ENOSYS

/** Arguments that make a rule refuse its syscall, and arguments it lets through (none for `always`). */
function argumentsFor(condition: Condition): { refused: bigint[]; allowed?: bigint[] } {
  const at = (argument: number, value: number | bigint) => Object.assign(new Array<bigint>(6).fill(0n), { [argument]: BigInt(value) })
  switch (condition.kind) {
    case 'always':
      return { refused: [] }
    case 'any-bit':
      return { refused: at(condition.argument, condition.mask & -condition.mask), allowed: at(condition.argument, ~condition.mask >>> 0) }
    case 'one-of':
      return { refused: at(condition.argument, condition.values[0]!), allowed: at(condition.argument, 0x1234) }
    case 'none-of':
      return { refused: at(condition.argument, 0x1234), allowed: at(condition.argument, condition.values[0]!) }
  }
}

describe.each(ARCHITECTURES)('the seccomp program for %s', (architecture) => {
  const program = encodedSeccompProgram(architecture)
  const auditArch = AUDIT_ARCH[architecture]
  const numbers = SYSCALL_NUMBERS[architecture]
  const run = (syscall: number, args: readonly bigint[] = []) => runFilter(program, { architecture: auditArch, syscall, args })

  it('fits the kernel limit and encodes 8 bytes per instruction', () => {
    expect(seccompProgram(architecture).length).toBeLessThanOrEqual(MAX_INSTRUCTIONS)
    expect(program.length).toBe(seccompProgram(architecture).length * 8)
  })

  it('every rule of the table refuses its syscall with its errno, and lets harmless arguments through', () => {
    let checked = 0
    for (const rule of SECCOMP_RULES) {
      const number = numbers[rule.syscall]
      if (number === undefined) continue
      const { refused, allowed } = argumentsFor(rule.refuseWhen)
      expect(run(number, refused), rule.syscall).toBe(RESULT.errno | rule.errno)
      if (allowed !== undefined) expect(run(number, allowed), rule.syscall).toBe(RESULT.allow)
      checked++
    }
    // Only x86-only syscalls are missing from aarch64's table.
    expect(checked).toBe(SECCOMP_RULES.length - (architecture === 'aarch64' ? 4 : 0))
  })

  it('allows every syscall the table does not name', () => {
    const named = new Set(Object.values(numbers))
    for (let number = 0; number < 460; number++) {
      if (!named.has(number)) expect(run(number), String(number)).toBe(RESULT.allow)
    }
  })

  it('kills a syscall made through another architecture (i386, arm32, the other 64-bit table)', () => {
    for (const foreign of [0x40000003, 0x40000028, AUDIT_ARCH[architecture === 'x86_64' ? 'aarch64' : 'x86_64']]) {
      expect(runFilter(program, { architecture: foreign, syscall: numbers.keyctl! })).toBe(RESULT.killProcess)
      expect(runFilter(program, { architecture: foreign, syscall: 0 })).toBe(RESULT.killProcess)
    }
  })

  it('compares only the low 32 bits of ioctl and personality arguments, as the kernel does', () => {
    expect(run(numbers.ioctl!, [0n, 0xffffffff00000000n | BigInt(REFUSED_IOCTLS.TIOCSTI)])).toBe(EPERM)
    expect(run(numbers.ioctl!, [0n, BigInt(REFUSED_IOCTLS.TIOCLINUX)])).toBe(EPERM)
    expect(run(numbers.ioctl!, [0n, 0x5401n])).toBe(RESULT.allow) // TCGETS
    for (const value of HARMLESS_PERSONALITIES) expect(run(numbers.personality!, [BigInt(value)])).toBe(RESULT.allow)
    expect(run(numbers.personality!, [0x0400000n])).toBe(EPERM) // READ_IMPLIES_EXEC
    expect(run(numbers.personality!, [0x0040000n])).toBe(EPERM) // ADDR_NO_RANDOMIZE
  })

  it('refuses every namespace flag of clone and unshare, allows threads and forks, and sends clone3 to clone', () => {
    for (let bit = 0; bit < 32; bit++) {
      const flag = 2 ** bit
      const expected = (CLONE_NAMESPACE_FLAGS & flag) !== 0 ? EPERM : RESULT.allow
      expect(run(numbers.clone!, [BigInt(flag)]), `clone 0x${flag.toString(16)}`).toBe(expected)
    }
    expect(run(numbers.clone!, [0x3d0f00n])).toBe(RESULT.allow) // glibc's pthread_create flags
    expect(run(numbers.clone!, [0x1200011n])).toBe(RESULT.allow) // fork(): CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD
    expect(run(numbers.unshare!, [0x10000000n])).toBe(EPERM) // CLONE_NEWUSER
    expect(run(numbers.unshare!, [0x80n])).toBe(EPERM) // CLONE_NEWTIME
    expect(run(numbers.unshare!, [0x200n])).toBe(RESULT.allow) // CLONE_FS
    expect(run(numbers.clone3!)).toBe(ENOSYS)
    expect(run(numbers.setns!)).toBe(EPERM)
  })

  it.runIf(architecture === 'x86_64')('fails x32 syscall numbers with ENOSYS, as a kernel without x32 does', () => {
    expect(run(X32_SYSCALL_BIT | 39)).toBe(ENOSYS) // getpid
    expect(run(X32_SYSCALL_BIT | numbers.keyctl!)).toBe(ENOSYS)
    expect(run(0xffffffff)).toBe(ENOSYS) // -1, which no table dispatches either
  })
})

describe('program pieces', () => {
  it('maps Node architectures and refuses any other', () => {
    expect(seccompArchitecture('x64')).toBe('x86_64')
    expect(seccompArchitecture('arm64')).toBe('aarch64')
    for (const other of ['ia32', 'arm', 'riscv64', 'ppc64', 's390x']) {
      expect(() => seccompArchitecture(other)).toThrow(SandboxError)
      expect(() => seccompArchitecture(other)).toThrow(/x64 and arm64 only/)
    }
  })

  it('the encoder refuses fields out of range, jumps past the end, a missing return and oversized programs', () => {
    const allowAll = { code: 0x06, jumpIfTrue: 0, jumpIfFalse: 0, k: RESULT.allow }
    expect(encode([allowAll])).toEqual(Buffer.from([0x06, 0, 0, 0, 0x00, 0x00, 0xff, 0x7f]))
    expect(() => encode([])).toThrow(RangeError)
    expect(() => encode([{ ...allowAll, k: 2 ** 32 }])).toThrow(/out of range/)
    expect(() => encode([{ code: 0x15, jumpIfTrue: 256, jumpIfFalse: 0, k: 0 }, allowAll])).toThrow(/out of range/)
    expect(() => encode([{ code: 0x15, jumpIfTrue: 1, jumpIfFalse: 0, k: 0 }, allowAll])).toThrow(/past the end/)
    expect(() => encode([{ code: 0x20, jumpIfTrue: 0, jumpIfFalse: 0, k: 0 }])).toThrow(/end with a return/)
    expect(() => encode(new Array(MAX_INSTRUCTIONS + 1).fill(allowAll))).toThrow(/1 to 4096/)
  })

  // The tables were written from the kernel's syscall tables; the installed headers check them again.
  it.runIf(existsSync('/usr/include/asm-generic/unistd.h'))('the syscall numbers match the installed kernel headers', () => {
    const headers: Record<SeccompArchitecture, string> = {
      x86_64: '/usr/include/x86_64-linux-gnu/asm/unistd_64.h',
      aarch64: '/usr/include/asm-generic/unistd.h',
    }
    for (const architecture of ARCHITECTURES) {
      if (!existsSync(headers[architecture])) continue
      const text = readFileSync(headers[architecture], 'utf8')
      for (const [name, number] of Object.entries(SYSCALL_NUMBERS[architecture])) {
        expect(new RegExp(`#define __NR_${name}\\s+${number}\\b`).test(text), `${architecture} ${name} ${number}`).toBe(true)
      }
    }
  })
})

describe('the filter file', () => {
  let dir: Awaited<ReturnType<typeof scratchDir>>
  beforeEach(async () => {
    dir = await scratchDir('filter')
  })
  afterEach(async () => {
    await dir.remove()
  })

  it('is written once, private, under a name taken from its content; a wrong content is replaced', async () => {
    const program = encodedSeccompProgram('x86_64')
    const directory = join(dir.path, 'filters')
    const path = await installFilterFile(program, directory)
    expect(path).toBe(join(directory, filterFileName(program)))
    expect(await readFile(path)).toEqual(program)
    expect((await stat(path)).mode & 0o777).toBe(0o600)
    expect((await stat(directory)).mode & 0o777).toBe(0o700)
    const written = (await stat(path)).ino
    expect(await installFilterFile(program, directory)).toBe(path)
    expect((await stat(path)).ino).toBe(written)
    // Tampered (or truncated by a cleaner): the next start puts the right program back.
    await chmod(path, 0o600)
    await writeFile(path, Buffer.alloc(8))
    expect(await installFilterFile(program, directory)).toBe(path)
    expect(await readFile(path)).toEqual(program)
    expect(filterFileName(encodedSeccompProgram('aarch64'))).not.toBe(filterFileName(program))
  })

  it('refuses a directory others may enter', async () => {
    const directory = join(dir.path, 'shared')
    await mkdir(directory)
    await chmod(directory, 0o711)
    await expect(installFilterFile(encodedSeccompProgram('x86_64'), directory)).rejects.toThrow(/not private to uid/)
  })

  it('the guard is the entry right below the workspace root on the way to the file', () => {
    expect(filterGuard('/w', '/w/.cache/dsh-sandbox/seccomp-1.bpf')).toBe('/w/.cache')
    expect(filterGuard('/tmp', '/tmp/dsh-sandbox-0/seccomp-1.bpf')).toBe('/tmp/dsh-sandbox-0')
    expect(filterGuard('/w', '/run/dsh-sandbox/seccomp-1.bpf')).toBeUndefined()
    expect(filterGuard('/w/a', '/w/ab/seccomp-1.bpf')).toBeUndefined()
  })
})
