import { createHash, randomBytes } from 'node:crypto'
import { lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { ensureRuntimeParent, hostRuntimeDir } from 'dsh-sandbox'
import { SubprocessError } from 'dsh-subprocess'
import { assertPrivateDir } from '../runtime-dir'

/** Where a spawn's `envFiles` are written on this machine: `<the user's runtime dir>/env-files` (0700). */
export function envFilesDir(uid: number = process.getuid?.() ?? -1): string {
  return join(hostRuntimeDir(uid), 'env-files')
}

/**
 * Write each of a spawn's `envFiles` (variable name to content) into `dir`, named by its content's
 * hash (0600: two sessions with the same startup file share it, and it never changes under one), and
 * answer the variables with their paths. The files live on the machine the session host runs on,
 * which is what the variable's reader needs: a startup file of this install, whatever its path there.
 */
export function writeEnvFiles(envFiles: Readonly<Record<string, string>>, dir: string = envFilesDir()): Record<string, string> {
  const paths: Record<string, string> = {}
  try {
    ensureRuntimeParent(dirname(dirname(dir)), process.getuid?.() ?? -1)
    // Each level is checked before the next is made in it: never a directory made through a planted symlink.
    ensurePrivateDir(dirname(dir))
    ensurePrivateDir(dir)
    for (const [name, content] of Object.entries(envFiles)) paths[name] = writeOne(dir, content)
  } catch (error) {
    throw new SubprocessError('SPAWN_FAILED', `could not write the terminal's startup files into ${dir}: ${(error as Error).message}`)
  }
  return paths
}

/** Make `dir` (0700) unless it exists, then check it is a real private directory of this user. */
function ensurePrivateDir(dir: string): void {
  try {
    mkdirSync(dir, { mode: 0o700 })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  assertPrivateDir(dir)
}

/** The file holding `content` in `dir`, written atomically unless an intact one is there already. */
function writeOne(dir: string, content: string): string {
  const bytes = Buffer.from(content, 'utf8')
  const path = join(dir, createHash('sha256').update(bytes).digest('hex').slice(0, 32))
  if (intact(path, bytes)) return path
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`
  try {
    writeFileSync(temporary, bytes, { mode: 0o600, flag: 'wx' })
    renameSync(temporary, path)
  } finally {
    rmSync(temporary, { force: true })
  }
  return path
}

/**
 * Whether `path` is a regular file of this user, 0600 and of one name only (no other name outside the
 * private directory can change it), holding exactly `bytes`.
 */
function intact(path: string, bytes: Buffer): boolean {
  try {
    const stat = lstatSync(path)
    if (!stat.isFile() || stat.uid !== (process.getuid?.() ?? -1) || (stat.mode & 0o777) !== 0o600 || stat.nlink !== 1) return false
    if (stat.size !== bytes.length) return false
    return readFileSync(path).equals(bytes)
  } catch {
    return false
  }
}
