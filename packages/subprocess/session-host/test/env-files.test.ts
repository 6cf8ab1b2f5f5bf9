import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { validateSpawnSpec } from 'dsh-subprocess'
import { afterAll, describe, expect, it } from 'vitest'
import { writeEnvFiles } from '../src/server/env-files'

// A spawn's envFiles become files on the session host's machine: private, named by content, shared
// by equal contents; a directory others could read or write is refused, as the socket's is.

const root = mkdtempSync(join(tmpdir(), 'dsh-env-files-'))
chmodSync(root, 0o700)

afterAll(() => rmSync(root, { recursive: true, force: true }))

describe('writeEnvFiles', () => {
  it('writes each content once (0600, in a 0700 directory) and answers the variables with their paths', () => {
    const dir = join(root, 'user', 'env-files')
    const first = writeEnvFiles({ PYTHONSTARTUP: 'print("hi")\n', OTHER: 'x' }, dir)
    expect(readFileSync(first.PYTHONSTARTUP as string, 'utf8')).toBe('print("hi")\n')
    expect(readFileSync(first.OTHER as string, 'utf8')).toBe('x')
    expect(lstatSync(first.PYTHONSTARTUP as string).mode & 0o777).toBe(0o600)
    expect(lstatSync(dir).mode & 0o777).toBe(0o700)
    // The same content is the same file; another content another one.
    expect(writeEnvFiles({ PYTHONSTARTUP: 'print("hi")\n' }, dir).PYTHONSTARTUP).toBe(first.PYTHONSTARTUP)
    expect(writeEnvFiles({ PYTHONSTARTUP: 'print("ho")\n' }, dir).PYTHONSTARTUP).not.toBe(first.PYTHONSTARTUP)
  })

  it('refuses a directory with group or other bits, with SPAWN_FAILED naming it', () => {
    const open = join(root, 'open')
    mkdirSync(join(open, 'env-files'), { recursive: true })
    chmodSync(join(open, 'env-files'), 0o755)
    expect(() => writeEnvFiles({ PYTHONSTARTUP: '' }, join(open, 'env-files'))).toThrow(
      expect.objectContaining({ code: 'SPAWN_FAILED', message: expect.stringContaining('mode 755') }),
    )
  })
})

describe('envFiles in a spawn spec', () => {
  const spec = { argv: ['true'], cwd: '/', rows: 24, cols: 80, graceMs: 0 }
  it('takes variable names and string contents within the bounds; refuses the rest with INVALID_SPEC', () => {
    expect(() => validateSpawnSpec({ ...spec, envFiles: { PYTHONSTARTUP: 'x' } })).not.toThrow()
    for (const envFiles of [{ 'A=B': 'x' }, { A: 1 }, { A: 'x'.repeat(65_537) }, Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`V${i}`, '']))]) {
      expect(() => validateSpawnSpec({ ...spec, envFiles } as never)).toThrow(expect.objectContaining({ code: 'INVALID_SPEC' }))
    }
  })
})
