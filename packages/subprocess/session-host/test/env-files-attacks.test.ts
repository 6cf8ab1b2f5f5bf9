/**
 * Attacks on where a session host writes a spawn's `envFiles`, as root with real files: things
 * planted at the directory or at a content-hash name must never be followed, trusted or written
 * through. Each test would fail with its defence removed.
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, chownSync, existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { validateSpawnSpec } from 'dsh-subprocess'
import { installed } from 'dsh-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { writeEnvFiles } from '../src/server/env-files'

const asRoot = process.getuid?.() === 0
const root = mkdtempSync(join(tmpdir(), 'dsh-env-attacks-'))
chmodSync(root, 0o700)
afterAll(() => rmSync(root, { recursive: true, force: true }))

let cases = 0
/** A fresh `<root>/caseN/user/env-files` whose parents exist (0700) and whose leaf does not. */
function freshDir(): string {
  const user = join(root, `case${cases++}`, 'user')
  mkdirSync(user, { recursive: true, mode: 0o700 })
  return join(user, 'env-files')
}

/** The name the session host gives `content` (the first 32 hex digits of its SHA-256). */
function hashName(content: string): string {
  return createHash('sha256').update(content, 'utf8').digest('hex').slice(0, 32)
}

const CONTENT = 'print("startup")\n'

describe('planted at the directory', () => {
  it('the user directory is a symlink to elsewhere: refused, and nothing is created at its target', () => {
    const elsewhere = mkdtempSync(join(root, 'elsewhere-'))
    chmodSync(elsewhere, 0o700)
    const user = join(root, `case${cases++}`)
    mkdirSync(user, { mode: 0o700 })
    symlinkSync(elsewhere, join(user, 'user'))
    expect(() => writeEnvFiles({ PYTHONSTARTUP: CONTENT }, join(user, 'user', 'env-files'))).toThrow(
      expect.objectContaining({ code: 'SPAWN_FAILED', message: expect.stringContaining('symlink') }),
    )
    expect(existsSync(join(elsewhere, 'env-files'))).toBe(false)
  })

  it('env-files is a symlink to a directory standing in for /etc: refused, nothing written there', () => {
    const dir = freshDir()
    const etc = mkdtempSync(join(root, 'etc-'))
    chmodSync(etc, 0o700)
    symlinkSync(etc, dir)
    expect(() => writeEnvFiles({ PYTHONSTARTUP: CONTENT }, dir)).toThrow(expect.objectContaining({ code: 'SPAWN_FAILED' }))
    expect(existsSync(join(etc, hashName(CONTENT)))).toBe(false)
  })

  it('env-files is a regular file: refused with SPAWN_FAILED', () => {
    const dir = freshDir()
    writeFileSync(dir, 'not a directory')
    expect(() => writeEnvFiles({ PYTHONSTARTUP: CONTENT }, dir)).toThrow(expect.objectContaining({ code: 'SPAWN_FAILED' }))
  })

  it.skipIf(!asRoot)('env-files belongs to another uid (65534), even at 0700: refused, naming the uid', () => {
    const dir = freshDir()
    mkdirSync(dir, { mode: 0o700 })
    chownSync(dir, 65534, 65534)
    expect(() => writeEnvFiles({ PYTHONSTARTUP: CONTENT }, dir)).toThrow(
      expect.objectContaining({ code: 'SPAWN_FAILED', message: expect.stringContaining('65534') }),
    )
  })
})

describe('planted at a content-hash name', () => {
  it('a symlink to a victim file: replaced by a private file, the victim untouched', () => {
    const dir = freshDir()
    mkdirSync(dir, { mode: 0o700 })
    const victim = join(root, `victim-${cases}`)
    writeFileSync(victim, 'root:x:0:0\n')
    symlinkSync(victim, join(dir, hashName(CONTENT)))
    const path = writeEnvFiles({ PYTHONSTARTUP: CONTENT }, dir).PYTHONSTARTUP!
    expect(readFileSync(victim, 'utf8')).toBe('root:x:0:0\n')
    expect(lstatSync(path).isFile()).toBe(true)
    expect(readFileSync(path, 'utf8')).toBe(CONTENT)
  })

  it.skipIf(!installed('mkfifo') && process.env.CI !== 'true')('a FIFO: never opened (no hang), replaced by the file', () => {
    const dir = freshDir()
    mkdirSync(dir, { mode: 0o700 })
    execFileSync('mkfifo', ['-m', '0600', join(dir, hashName(CONTENT))])
    const path = writeEnvFiles({ PYTHONSTARTUP: CONTENT }, dir).PYTHONSTARTUP!
    expect(lstatSync(path).isFile()).toBe(true)
    expect(readFileSync(path, 'utf8')).toBe(CONTENT)
  })

  it('a directory: the spawn fails with SPAWN_FAILED naming the place, nothing is followed into it', () => {
    const dir = freshDir()
    mkdirSync(join(dir, hashName(CONTENT)), { recursive: true, mode: 0o700 })
    expect(() => writeEnvFiles({ PYTHONSTARTUP: CONTENT }, dir)).toThrow(
      expect.objectContaining({ code: 'SPAWN_FAILED', message: expect.stringContaining(dir) }),
    )
  })

  it('the right content but readable by others (0644): not trusted, rewritten 0600', () => {
    const dir = freshDir()
    mkdirSync(dir, { mode: 0o700 })
    const planted = join(dir, hashName(CONTENT))
    writeFileSync(planted, CONTENT, { mode: 0o644 })
    chmodSync(planted, 0o644)
    const path = writeEnvFiles({ PYTHONSTARTUP: CONTENT }, dir).PYTHONSTARTUP!
    expect(lstatSync(path).mode & 0o777).toBe(0o600)
  })

  it('the right content, hard-linked from a file outside: not trusted (what guards its other name is not the private directory), replaced', () => {
    const dir = freshDir()
    mkdirSync(dir, { mode: 0o700 })
    const outside = join(root, `outside-${cases}`)
    writeFileSync(outside, CONTENT)
    linkSync(outside, join(dir, hashName(CONTENT)))
    chmodSync(outside, 0o600)
    const path = writeEnvFiles({ PYTHONSTARTUP: CONTENT }, dir).PYTHONSTARTUP!
    expect(lstatSync(path).ino).not.toBe(lstatSync(outside).ino)
    expect(lstatSync(path).nlink).toBe(1)
    writeFileSync(outside, 'import os; os.system("id")\n')
    expect(readFileSync(path, 'utf8')).toBe(CONTENT)
  })

  it.skipIf(!asRoot)('the right content owned by another uid (65534): not trusted, replaced by one of ours', () => {
    const dir = freshDir()
    mkdirSync(dir, { mode: 0o700 })
    const planted = join(dir, hashName(CONTENT))
    writeFileSync(planted, CONTENT, { mode: 0o600 })
    chownSync(planted, 65534, 65534)
    const path = writeEnvFiles({ PYTHONSTARTUP: CONTENT }, dir).PYTHONSTARTUP!
    expect(lstatSync(path).uid).toBe(0)
  })
})

describe('what a spawn may name', () => {
  const spec = { argv: ['true'], cwd: '/', rows: 24, cols: 80, graceMs: 0 }
  const refused = (envFiles: Record<string, unknown>) => () => validateSpawnSpec({ ...spec, envFiles } as never)

  it('names that are not plain variable names (/, .., NUL, =, empty, a leading digit) are INVALID_SPEC', () => {
    for (const name of ['a/b', '..', '../PYTHONSTARTUP', 'A\0B', 'A=B', '', '1A', ' A']) {
      expect(refused({ [name]: 'x' }), JSON.stringify(name)).toThrow(expect.objectContaining({ code: 'INVALID_SPEC' }))
    }
  })

  it("the dynamic loader's and command search's variables (LD_*, DYLD_*, PATH) are INVALID_SPEC: a file there is code in every program, or no search path at all", () => {
    for (const name of ['LD_PRELOAD', 'LD_LIBRARY_PATH', 'LD_AUDIT', 'DYLD_INSERT_LIBRARIES', 'PATH']) {
      expect(refused({ [name]: 'x' }), name).toThrow(expect.objectContaining({ code: 'INVALID_SPEC', message: expect.stringContaining(name) }))
    }
    // A startup file for a program, the field's purpose, stays allowed.
    expect(refused({ PYTHONSTARTUP: 'x', BASH_ENV: 'x', PATH_TO_FILE: 'x' })).not.toThrow()
  })

  it('exactly 8 files of exactly 64 KiB (multibyte counted in bytes) pass; one more file, or one more byte, is INVALID_SPEC', () => {
    const full = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`V${i}`, i === 0 ? 'é'.repeat(32_768) : 'x'.repeat(65_536)]))
    expect(refused(full)).not.toThrow()
    expect(refused({ ...full, V8: '' })).toThrow(expect.objectContaining({ code: 'INVALID_SPEC' }))
    expect(refused({ V0: `${'é'.repeat(32_768)}a` })).toThrow(expect.objectContaining({ code: 'INVALID_SPEC' }))
  })
})
