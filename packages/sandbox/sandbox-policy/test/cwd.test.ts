import { mkdir, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { isWithin, type ResolvedSandboxPolicy, resolveSandboxCwd } from 'dsh-sandbox-policy'
import { scratchDir } from './helpers'

let dir: Awaited<ReturnType<typeof scratchDir>>
let workspace: string
let outside: string

beforeEach(async () => {
  dir = await scratchDir('cwd')
  workspace = join(dir.path, 'ws')
  outside = join(dir.path, 'ws-sibling')
  await mkdir(join(workspace, 'src'), { recursive: true })
  await mkdir(outside)
})

afterEach(async () => {
  await dir.remove()
})

async function codeOf(policy: ResolvedSandboxPolicy, cwd?: string): Promise<string> {
  return resolveSandboxCwd(policy, cwd).then(
    (resolved) => `ok ${resolved}`,
    (error: { code?: string }) => error.code ?? String(error),
  )
}

describe('working directory under a policy', () => {
  it('defaults to the workspace root and resolves relative paths against it', async () => {
    const policy = { mode: 'workspace-write', workspaceRoot: workspace } as const
    expect(await resolveSandboxCwd(policy)).toBe(workspace)
    expect(await resolveSandboxCwd(policy, '')).toBe(workspace)
    expect(await resolveSandboxCwd(policy, 'src')).toBe(join(workspace, 'src'))
    expect(await resolveSandboxCwd(policy, join(workspace, 'src', '..'))).toBe(workspace)
  })

  it('refuses a cwd outside the workspace under a confined mode, including through a symlink', async () => {
    await symlink(outside, join(workspace, 'escape'))
    for (const mode of ['read-only', 'workspace-write'] as const) {
      const policy = { mode, workspaceRoot: workspace }
      expect(await codeOf(policy, outside)).toBe('CWD_OUTSIDE_WORKSPACE')
      expect(await codeOf(policy, '..')).toBe('CWD_OUTSIDE_WORKSPACE')
      expect(await codeOf(policy, 'escape')).toBe('CWD_OUTSIDE_WORKSPACE')
    }
  })

  it('allows any existing directory under danger-full-access', async () => {
    expect(await resolveSandboxCwd({ mode: 'danger-full-access', workspaceRoot: workspace }, outside)).toBe(outside)
  })

  it('refuses a cwd that is missing or not a directory', async () => {
    await writeFile(join(workspace, 'file'), '')
    const policy = { mode: 'danger-full-access', workspaceRoot: workspace } as const
    expect(await codeOf(policy, 'missing')).toBe('INVALID_CWD')
    expect(await codeOf(policy, 'file')).toBe('INVALID_CWD')
  })

  it('compares whole path components', () => {
    expect(isWithin('/w', '/w')).toBe(true)
    expect(isWithin('/w', '/w/a/b')).toBe(true)
    expect(isWithin('/w', '/w-other')).toBe(false)
    expect(isWithin('/w', '/')).toBe(false)
    expect(isWithin('/w', '/w/..x')).toBe(true)
    expect(isWithin('/', '/anything')).toBe(true)
  })
})
