import { Context } from '@deepseek-ai/cordis'
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SandboxError, type SandboxPolicy } from 'dsh-sandbox'
import * as localPlugin from 'dsh-sandbox-local'
import { bwrapUnavailable, run, scratchDir } from './helpers'

/**
 * `readableFiles`, with real bubblewrap, run as the user of this suite (root here): a listed file
 * under the host's /tmp becomes readable inside and nothing else does, and no listing can turn
 * into a way out (a socket, a directory, the host's /proc) or into a write.
 */

type Scratch = Awaited<ReturnType<typeof scratchDir>>
const root = new Context()
let workspace: Scratch
let shipped: Scratch
let startup: string
let sibling: string
let socketPath: string
let socketServer: Server

async function sh(script: string, policy: Partial<SandboxPolicy> = {}) {
  const full: SandboxPolicy = { mode: 'workspace-write', workspaceRoot: workspace.path, ...policy }
  return run(await root.sandbox.confine(['sh', '-c', script], full))
}

async function refusal(readableFiles: string[]): Promise<SandboxError> {
  const outcome = await root.sandbox.confine(['true'], { mode: 'read-only', workspaceRoot: workspace.path, readableFiles }).then(
    () => undefined,
    (error: unknown) => error,
  )
  if (!(outcome instanceof SandboxError)) throw new Error(`expected a SandboxError, got ${String(outcome)}`)
  return outcome
}

describe.skipIf(bwrapUnavailable !== undefined)('readable files, with real bubblewrap', () => {
  beforeAll(async () => {
    await root.plugin(localPlugin, {})
    workspace = await scratchDir('readable-ws', '/var/tmp')
    // Under /tmp on purpose: the sandbox's /tmp is private, so only the listing can show it.
    shipped = await scratchDir('readable-shipped')
    startup = join(shipped.path, 'repl', 'startup.py')
    sibling = join(shipped.path, 'repl', 'secret.txt')
    await mkdir(join(shipped.path, 'repl'))
    await writeFile(startup, 'print("marked")\n')
    await writeFile(sibling, 'secret\n')
    socketPath = join(shipped.path, 'control.sock')
    socketServer = createServer((connection) => connection.end('GRANTED\n'))
    await new Promise<void>((listening) => socketServer.listen(socketPath, listening))
  })

  afterAll(async () => {
    await new Promise((closed) => socketServer?.close(closed))
    await workspace?.remove()
    await shipped?.remove()
  })

  it('a listed file under the host /tmp is readable inside; unlisted, it is hidden like the rest of /tmp', async () => {
    const hidden = await sh(`cat '${startup}'`)
    expect(hidden.code).not.toBe(0)
    for (const mode of ['read-only', 'workspace-write'] as const) {
      const shown = await sh(`cat '${startup}'; cat '${sibling}' || echo NO-SIBLING`, { mode, readableFiles: [startup] })
      expect(shown.stdout, mode).toBe('print("marked")\nNO-SIBLING\n')
    }
  })

  it('stays read-only: writing, truncating, replacing or removing it fails and the host file is unchanged', async () => {
    const attempts = [
      `echo hacked > '${startup}'`,
      `: > '${startup}'`,
      `rm -f '${startup}' && test ! -e '${startup}'`,
      `mv '${startup}' '${startup}.moved'`,
      `mount -o remount,bind,rw '${startup}'`,
      `umount '${startup}' && echo gone > '${startup}'`,
    ]
    for (const attempt of attempts) {
      const result = await sh(attempt, { readableFiles: [startup] })
      expect(result.code, attempt).not.toBe(0)
    }
    expect(await readFile(startup, 'utf8')).toBe('print("marked")\n')
  })

  it('is visible at its canonical path when named through a symlink', async () => {
    const link = join(shipped.path, 'link.py')
    await symlink(startup, link)
    const result = await sh(`cat '${startup}'; test -e '${link}' || echo NO-LINK`, { readableFiles: [link] })
    expect(result.stdout).toBe('print("marked")\nNO-LINK\n')
  })

  it('refuses a socket, also through a symlink, so a listing cannot reach a control socket', async () => {
    const link = join(shipped.path, 'socket-link')
    await symlink(socketPath, link)
    for (const path of [socketPath, link]) {
      const error = await refusal([path])
      expect(error.code, path).toBe('INVALID_POLICY')
      expect(error.message, path).toMatch(/not a regular file/)
    }
  })

  it('refuses a directory, a missing file and files of the filesystems the sandbox replaces', async () => {
    expect((await refusal([join(shipped.path, 'repl')])).message).toMatch(/not a regular file/)
    expect((await refusal([join(shipped.path, 'missing.py')])).message).toMatch(/does not exist/)
    for (const path of ['/proc/self/environ', '/proc/1/environ', '/dev/null']) {
      const error = await refusal([path])
      expect(error.code, path).toBe('INVALID_POLICY')
      expect(error.message, path).toMatch(/replaces with its own/)
    }
  })

  it('a listed file inside a writable workspace keeps the workspace writable', async () => {
    const inside = join(workspace.path, 'notes.txt')
    await writeFile(inside, 'before\n')
    const result = await sh(`echo after > '${inside}' && echo WROTE`, { readableFiles: [inside] })
    expect(result.stdout).toBe('WROTE\n')
    expect(await readFile(inside, 'utf8')).toBe('after\n')
  })
})
