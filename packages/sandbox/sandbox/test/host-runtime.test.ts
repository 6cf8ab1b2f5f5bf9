import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { assertRuntimeParent, ensureRuntimeParent, HOST_RUNTIME_PARENT, hostRuntimeDir, type RuntimeParentError } from 'dsh-sandbox'

/** A uid that is neither root nor the user running the tests (nobody on Debian). */
const OTHER_UID = 65534
const uid = process.getuid?.() ?? -1

let scratch: string
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'dsh-sandbox-runtime-'))
})
afterEach(() => rmSync(scratch, { recursive: true, force: true }))

/** The error `run` throws, as plain values vitest can print. */
function refusal(run: () => void): { name: string; code: string; message: string } | undefined {
  try {
    run()
    return undefined
  } catch (error) {
    const { name, code, message } = error as RuntimeParentError
    return { name, code, message }
  }
}

describe('the host runtime path rule', () => {
  it('is /tmp/dsh-terminal/<uid>, whatever XDG_RUNTIME_DIR or TMPDIR say', () => {
    const saved = { xdg: process.env.XDG_RUNTIME_DIR, tmp: process.env.TMPDIR }
    process.env.XDG_RUNTIME_DIR = scratch
    process.env.TMPDIR = scratch
    try {
      expect(HOST_RUNTIME_PARENT).toBe('/tmp/dsh-terminal')
      expect(hostRuntimeDir(0)).toBe('/tmp/dsh-terminal/0')
      expect(hostRuntimeDir(1000)).toBe('/tmp/dsh-terminal/1000')
      expect(hostRuntimeDir(1000, '/elsewhere')).toBe('/elsewhere/1000')
    } finally {
      for (const [name, value] of [
        ['XDG_RUNTIME_DIR', saved.xdg],
        ['TMPDIR', saved.tmp],
      ] as const) {
        if (value === undefined) delete process.env[name]
        else process.env[name] = value
      }
    }
  })
})

describe('the parent check', () => {
  it('creates a missing parent sticky and world-writable, like /tmp, and accepts it again', () => {
    const parent = join(scratch, 'dsh-terminal')
    expect(ensureRuntimeParent(parent, uid)).toBe(parent)
    expect(lstatSync(parent).mode & 0o7777).toBe(0o1777)
    expect(ensureRuntimeParent(parent, uid)).toBe(parent)
  })

  it('accepts a parent of root or of the user that only its owner can write, sticky or not', () => {
    const ownerOnly = join(scratch, 'owner-only')
    mkdirSync(ownerOnly, { mode: 0o755 })
    expect(() => assertRuntimeParent(ownerOnly, uid)).not.toThrow()
    expect(() => assertRuntimeParent('/tmp', uid)).not.toThrow()
  })

  it('refuses a planted symlink, even to a good directory', () => {
    const real = ensureRuntimeParent(join(scratch, 'real'), uid)
    const link = join(scratch, 'link')
    symlinkSync(real, link)
    expect(refusal(() => ensureRuntimeParent(link, uid))).toMatchObject({ code: 'UNSAFE_RUNTIME_DIR', message: expect.stringContaining('is a symlink') })
  })

  it("refuses a parent owned by another uid, although it is sticky: its owner could swap a user's directory", () => {
    const foreign = join(scratch, 'foreign')
    mkdirSync(foreign)
    chmodSync(foreign, 0o1777)
    chownSync(foreign, OTHER_UID, OTHER_UID)
    expect(refusal(() => ensureRuntimeParent(foreign, uid))).toMatchObject({
      name: 'RuntimeParentError',
      code: 'UNSAFE_RUNTIME_DIR',
      message: expect.stringContaining(`belongs to uid ${OTHER_UID}, not to root or you`),
    })
  })

  it('refuses a parent that others may write without the sticky bit, and a file', () => {
    const open = join(scratch, 'open')
    mkdirSync(open)
    chmodSync(open, 0o777)
    expect(refusal(() => assertRuntimeParent(open, uid))).toMatchObject({ code: 'UNSAFE_RUNTIME_DIR', message: expect.stringContaining('chmod 1777') })
    const file = join(scratch, 'file')
    writeFileSync(file, '')
    expect(refusal(() => ensureRuntimeParent(file, uid))).toMatchObject({ code: 'UNSAFE_RUNTIME_DIR', message: expect.stringContaining('not a directory') })
  })

  it('says why it cannot create a parent', () => {
    expect(refusal(() => ensureRuntimeParent(join(scratch, 'missing', 'dsh-terminal'), uid))).toMatchObject({
      code: 'UNSAFE_RUNTIME_DIR',
      message: expect.stringContaining('cannot create'),
    })
  })
})
