import { chmodSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Config } from 'dsh-sandbox-local'
import {
  ensurePrivateDirectory,
  expandHomePath,
  GIT_CONFIG_INCLUDE,
  HOST_GITCONFIG,
  homesDirectory,
  planCredentialMasks,
  planPrivateHome,
  workspaceHomeName,
} from 'dsh-sandbox-local/internal'
import { scratchDir } from './helpers'
import { plantHome } from './home-fixture'

/** How the host plans a session's home and masks, on real directories (no sandbox is started). */

type Scratch = Awaited<ReturnType<typeof scratchDir>>
let scratch: Scratch
let home: string
let homes: string

/** The thrown error's code and message, as plain values. */
function refusal(run: () => unknown): { code?: string; message: string } | undefined {
  try {
    run()
    return undefined
  } catch (error) {
    return { code: (error as { code?: string }).code, message: (error as Error).message }
  }
}

beforeAll(async () => {
  scratch = await scratchDir('home-plan', '/var/tmp')
  home = join(scratch.path, 'home')
  homes = join(scratch.path, 'state', 'homes')
  mkdirSync(home)
  plantHome(home)
})
afterAll(() => scratch?.remove())

describe('where private homes live', () => {
  it('under $XDG_STATE_HOME, else ~/.local/state, unless configured; one directory per workspace and mode', () => {
    expect(homesDirectory(undefined, '/home/u', {})).toBe('/home/u/.local/state/dsh-terminal/homes')
    expect(homesDirectory(undefined, '/home/u', { XDG_STATE_HOME: '/s' })).toBe('/s/dsh-terminal/homes')
    expect(homesDirectory(undefined, '/home/u', { XDG_STATE_HOME: 'relative' })).toBe('/home/u/.local/state/dsh-terminal/homes')
    expect(homesDirectory('/elsewhere', '/home/u', { XDG_STATE_HOME: '/s' })).toBe('/elsewhere')
    expect(workspaceHomeName('/work/my project', true)).toMatch(/^my_project-[0-9a-f]{16}$/)
    expect(workspaceHomeName('/work/my project', false)).toBe(`${workspaceHomeName('/work/my project', true)}-read-only`)
    expect(workspaceHomeName('/other/my project', true)).not.toBe(workspaceHomeName('/work/my project', true))
  })

  it('refuses a home directory others may write (SANDBOX_UNAVAILABLE), and makes new ones 0700', () => {
    const made = ensurePrivateDirectory(join(scratch.path, 'fresh', 'h'))
    expect(statSync(made).mode & 0o777).toBe(0o700)
    const open = join(scratch.path, 'open')
    mkdirSync(open)
    chmodSync(open, 0o777)
    expect(refusal(() => ensurePrivateDirectory(open))).toMatchObject({ code: 'SANDBOX_UNAVAILABLE', message: expect.stringContaining('delete it') })
    expect(refusal(() => ensurePrivateDirectory(made))).toBeUndefined()
  })

  it('includes the real ~/.gitconfig from a private one written once, never through a link planted in its place', () => {
    const workspace = join(scratch.path, 'ws')
    mkdirSync(workspace)
    const planned = planPrivateHome({ home, workspaceRoot: workspace, writable: true, files: ['.gitconfig', '.bashrc', '.missing'], homes })!
    expect(planned.files).toEqual([
      { source: join(home, '.bashrc'), destination: join(home, '.bashrc') },
      { source: join(home, '.gitconfig'), destination: join(home, HOST_GITCONFIG) },
    ])
    expect(readFileSync(join(planned.source, '.gitconfig'), 'utf8')).toBe(GIT_CONFIG_INCLUDE)
    writeFileSync(join(planned.source, '.gitconfig'), '[user]\n\tname = changed\n')
    planPrivateHome({ home, workspaceRoot: workspace, writable: true, files: ['.gitconfig'], homes })
    expect(readFileSync(join(planned.source, '.gitconfig'), 'utf8')).toBe('[user]\n\tname = changed\n')
    // A read-only session's home is another directory; a link planted there is not written through.
    const target = join(scratch.path, 'target')
    writeFileSync(target, 'untouched\n')
    const readOnlyHome = join(homes, workspaceHomeName(workspace, false))
    mkdirSync(readOnlyHome, { recursive: true, mode: 0o700 })
    symlinkSync(target, join(readOnlyHome, '.gitconfig'))
    expect(planPrivateHome({ home, workspaceRoot: workspace, writable: false, files: ['.gitconfig'], homes })?.source).toBe(readOnlyHome)
    expect(readFileSync(target, 'utf8')).toBe('untouched\n')
  })

  it('gives none when the workspace is the home or holds it; a read-only workspace of / does not count', () => {
    expect(planPrivateHome({ home, workspaceRoot: home, writable: true, files: [], homes })).toBeUndefined()
    expect(planPrivateHome({ home, workspaceRoot: scratch.path, writable: false, files: [], homes })).toBeUndefined()
    expect(planPrivateHome({ home, workspaceRoot: '/', writable: false, files: [], homes })?.path).toBe(home)
    expect(planPrivateHome({ home: undefined, workspaceRoot: '/', writable: false, files: [], homes })).toBeUndefined()
  })
})

describe('planCredentialMasks', () => {
  const workspaceRoot = '/var/tmp/elsewhere'
  const privateHome = (files: string[]) => planPrivateHome({ home, workspaceRoot: '/', writable: false, files, homes })

  it('masks only what would show: the system files and /root as root; nothing behind the private home', () => {
    const plan = planCredentialMasks({ home, privateHome: privateHome([]), workspaceRoot, writable: true, readablePaths: [], isRoot: true })
    expect(plan.masks.map((mask) => mask.path)).toEqual(
      ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/root'].filter(
        (path) => refusal(() => readFileSync(path)) === undefined || path === '/root',
      ),
    )
    expect(plan.masks.find((mask) => mask.path === '/root')?.directory).toBe(true)
    expect(plan.masks.find((mask) => mask.path === '/etc/shadow')?.directory).toBe(false)
    expect(
      planCredentialMasks({ home, privateHome: privateHome([]), workspaceRoot, writable: true, readablePaths: [], isRoot: false }).masks.map((m) => m.path),
    ).not.toContain('/root')
  })

  it('drops a dotfile inside a credential, masks a credential inside a dotfile directory, and opens readable paths', () => {
    const plan = planCredentialMasks({
      home,
      privateHome: privateHome(['.ssh/id_rsa', '.config', '.bashrc']),
      workspaceRoot,
      writable: true,
      readablePaths: ['~/.config/gh', '~/.aws'],
      isRoot: false,
    })
    expect(plan.homeFiles.map((file) => file.destination)).toEqual(
      [join(home, '.config'), join(home, '.bashrc')].sort((a, b) => a.split('/').length - b.split('/').length),
    )
    const homeMasks = plan.masks.filter((mask) => mask.path.startsWith(home)).map((mask) => mask.path)
    expect(homeMasks.sort()).toEqual([join(home, '.config/chromium'), join(home, '.config/gcloud'), join(home, '.config/google-chrome')])
    expect(plan.opened).toEqual([
      { source: join(home, '.config/gh'), destination: join(home, '.config/gh') },
      { source: join(home, '.aws'), destination: join(home, '.aws') },
    ])
  })

  it('masks every credential of a home the workspace shows, at its canonical path, but not the workspace itself', () => {
    const linked = join(scratch.path, 'linked-home')
    mkdirSync(linked)
    mkdirSync(join(scratch.path, 'keys'))
    symlinkSync(join(scratch.path, 'keys'), join(linked, '.ssh'))
    const plan = planCredentialMasks({ home: linked, privateHome: undefined, workspaceRoot: linked, writable: true, readablePaths: [], isRoot: false })
    expect(plan.masks.filter((mask) => !mask.path.startsWith('/etc'))).toEqual([{ path: join(scratch.path, 'keys'), directory: true }])
    const ssh = planCredentialMasks({ home, privateHome: undefined, workspaceRoot: join(home, '.ssh'), writable: true, readablePaths: [], isRoot: false })
    expect(ssh.masks.map((mask) => mask.path)).not.toContain(join(home, '.ssh'))
    expect(expandHomePath('~', home)).toBe(home)
    expect(expandHomePath('~/x', undefined)).toBeUndefined()
    expect(expandHomePath('relative', home)).toBeUndefined()
  })
})

describe('the home options of the config', () => {
  it('defaults to a private home with the harmless dotfiles, and refuses paths that leave the home or are not absolute', () => {
    const config = Config.parse({})
    expect(config).toMatchObject({ privateHome: true, readablePaths: [] })
    expect(config.homeFiles).toEqual(expect.arrayContaining(['.gitconfig', '.bashrc', '.vimrc', '.inputrc', '.profile']))
    expect(() => Config.parse({ homeFiles: ['/etc/passwd'] })).toThrow(/relative to \$HOME/)
    expect(() => Config.parse({ homeFiles: ['../other/.bashrc'] })).toThrow(/relative to \$HOME/)
    expect(() => Config.parse({ readablePaths: ['.ssh'] })).toThrow(/absolute or starts with ~\//)
    expect(() => Config.parse({ homesDirectory: 'relative' })).toThrow(/absolute/)
  })
})
