import { lstatSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { processExists } from './process'

/**
 * Remove what dead processes left in `parent`: entries whose name `pattern` matches, its first group
 * being the owner's pid, that are real directories of this uid untouched for `minAgeMs`, and whose
 * pid names no process (nor this one). A symlink, another user's entry or a young one stays: its
 * owner may still be cleaning it. Best effort; answers how many were removed.
 */
export function removeOrphanDirectories(parent: string, pattern: RegExp, minAgeMs: number, now: number = Date.now()): number {
  const uid = process.getuid?.() ?? -1
  let entries: string[]
  try {
    entries = readdirSync(parent)
  } catch {
    return 0
  }
  let removed = 0
  for (const entry of entries) {
    const pid = Number(pattern.exec(entry)?.[1])
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || processExists(pid)) continue
    const path = join(parent, entry)
    try {
      const stats = lstatSync(path)
      if (!stats.isDirectory() || stats.uid !== uid || now - stats.mtimeMs < minAgeMs) continue
      rmSync(path, { recursive: true, force: true })
      removed += 1
    } catch {
      // Gone meanwhile, or not ours to remove.
    }
  }
  return removed
}
