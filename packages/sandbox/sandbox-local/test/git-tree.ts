import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { lstat, readdir, readlink } from 'node:fs/promises'
import { join } from 'node:path'

/** Whether git is installed; on CI it must be (the git tests then fail instead of skipping). */
export const hasGit = existsSync('/usr/bin/git')
if (!hasGit && process.env.CI) throw new Error('git must be installed on CI for the git metadata tests')

/** Author flags so commits work without a global git identity. */
export const IDENTITY = ['-c', 'user.name=Agent', '-c', 'user.email=agent@example.invalid']

/** Run git on the host (outside any sandbox) and return what it printed. */
export function git(args: string[], cwd: string): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' })
}

/** A new repository at `path` with one commit, made on the host. */
export function initRepository(path: string): void {
  git(['init', '-q', path], '/')
  git([...IDENTITY, 'commit', '-q', '--allow-empty', '-m', 'first'], path)
}

/**
 * Every entry below `dir` with its kind (and a link's target), sorted: two equal snapshots mean
 * nothing was created, removed or replaced there. Links are listed, never followed.
 */
export async function snapshot(dir: string): Promise<string[]> {
  const lines: string[] = []
  const walk = async (path: string, prefix: string): Promise<void> => {
    for (const name of (await readdir(path)).sort()) {
      const child = join(path, name)
      const info = await lstat(child)
      if (info.isSymbolicLink()) lines.push(`${prefix}${name} -> ${await readlink(child)}`)
      else if (info.isDirectory()) {
        lines.push(`${prefix}${name}/`)
        await walk(child, `${prefix}${name}/`)
      } else lines.push(`${prefix}${name}`)
    }
  }
  await walk(dir, '')
  return lines
}
