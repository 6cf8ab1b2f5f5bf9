import { mkdtemp, realpath, rm, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { privateRuntimeDirs } from '../src/runtime-dirs'

describe('the directories a sandbox gets private copies of', () => {
  it('takes $XDG_RUNTIME_DIR and a $TMPDIR other than /tmp, canonical and once each; skips what is not an existing absolute directory', async () => {
    const base = await realpath(await mkdtemp('/var/tmp/dsh-runtime-dirs-'))
    try {
      const link = join(base, 'link')
      await symlink(base, link)
      expect(await privateRuntimeDirs({ XDG_RUNTIME_DIR: link }, base)).toEqual([base])
      expect(await privateRuntimeDirs({ XDG_RUNTIME_DIR: base }, '/tmp')).toEqual([base])
      expect(await privateRuntimeDirs({}, '/tmp')).toEqual([])
      expect(await privateRuntimeDirs({ XDG_RUNTIME_DIR: 'relative/dir' }, '/tmp')).toEqual([])
      expect(await privateRuntimeDirs({ XDG_RUNTIME_DIR: join(base, 'missing') }, join(base, 'gone'))).toEqual([])
      expect(await privateRuntimeDirs({ XDG_RUNTIME_DIR: '/' }, '/tmp')).toEqual([])
    } finally {
      await rm(base, { recursive: true, force: true })
    }
  })
})
