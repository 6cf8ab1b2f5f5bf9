import { Context } from '@deepseek-ai/cordis'
import { realpathSync } from 'node:fs'
import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as policyPlugin from 'dsh-sandbox-policy'
import { Config } from 'dsh-sandbox-policy'
import { scratchDir, setup } from './helpers'

let dir: Awaited<ReturnType<typeof scratchDir>>

beforeEach(async () => {
  dir = await scratchDir('config')
})

afterEach(async () => {
  await dir.remove()
})

async function loadError(config: unknown): Promise<string> {
  const root = new Context()
  return Promise.resolve(root.plugin(policyPlugin, config as never)).then(
    () => 'loaded',
    (error: unknown) => String(error),
  )
}

describe('dsh-sandbox-policy config', () => {
  it('defaults to workspace-write over the canonical process cwd', async () => {
    expect(Config.parse({})).toEqual({ mode: 'workspace-write', workspaceRoot: realpathSync(process.cwd()), allowedHosts: [] })
    const { root } = await setup()
    expect(root.sandboxPolicy.defaultMode).toBe('workspace-write')
    expect(root.sandboxPolicy.workspaceRoot).toBe(realpathSync(process.cwd()))
  })

  it('canonicalises workspaceRoot: relative to the process cwd, symlinks resolved', async () => {
    const real = join(dir.path, 'real')
    await mkdir(real)
    await symlink(real, join(dir.path, 'link'))
    expect(Config.parse({ workspaceRoot: join(dir.path, 'link') }).workspaceRoot).toBe(real)
    expect(Config.parse({ workspaceRoot: relative(process.cwd(), real) }).workspaceRoot).toBe(real)
    const { root } = await setup({ mode: 'read-only', workspaceRoot: join(dir.path, 'link', '.') })
    expect(root.sandboxPolicy.workspaceRoot).toBe(real)
    expect(root.sandboxPolicy.defaultMode).toBe('read-only')
  })

  it('refuses a workspace root that is missing, empty or not a directory, and an unknown mode', async () => {
    expect(await loadError({ workspaceRoot: join(dir.path, 'missing') })).toMatch(/invalid config.*does not exist/s)
    await writeFile(join(dir.path, 'file'), '')
    expect(await loadError({ workspaceRoot: join(dir.path, 'file') })).toMatch(/invalid config.*not a directory/s)
    expect(await loadError({ workspaceRoot: '' })).toMatch(/invalid config/)
    expect(await loadError({ mode: 'full' })).toMatch(/invalid config/)
  })

  it('network: unset by default (each mode decides), a set value reaches every resolved policy, anything else refused', async () => {
    const unset = (await setup()).root
    expect('network' in unset.sandboxPolicy.resolve(await unset.agents.create())).toBe(false)
    const cut = (await setup({ network: 'none' })).root
    expect(cut.sandboxPolicy.resolve(await cut.agents.create())).toMatchObject({ mode: 'workspace-write', network: 'none' })
    expect(await loadError({ network: 'lan' })).toMatch(/invalid config/)
  })

  it('allowedHosts: reaches the resolved policy only under the allowlist network; a malformed entry is refused with its reason', async () => {
    const allowlist = (await setup({ network: 'allowlist', allowedHosts: ['github.com', '*.npmjs.org', 'github.com:22'] })).root
    expect(allowlist.sandboxPolicy.resolve(await allowlist.agents.create())).toMatchObject({
      network: 'allowlist',
      allowedHosts: ['github.com', '*.npmjs.org', 'github.com:22'],
    })
    const host = (await setup({ network: 'host', allowedHosts: ['github.com'] })).root
    expect('allowedHosts' in host.sandboxPolicy.resolve(await host.agents.create())).toBe(false)
    expect(await loadError({ network: 'allowlist', allowedHosts: ['*.com'] })).toMatch(/whole top-level domain/)
    expect(await loadError({ network: 'allowlist', allowedHosts: ['http://github.com'] })).toMatch(/not a host name/)
    expect(await loadError({ network: 'allowlist', allowedHosts: ['github.com:99999'] })).toMatch(/invalid port/)
  })

  it('is the one ctx.sandboxPolicy: a second policy fails to load', async () => {
    const { root } = await setup()
    expect(await Promise.resolve(root.plugin(policyPlugin, {})).then(() => 'loaded', String)).toMatch(/service "sandboxPolicy" has been registered/)
  })
})
