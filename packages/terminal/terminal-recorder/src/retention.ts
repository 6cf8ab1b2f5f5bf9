import { lstat, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { listRecordingNames } from './directory'

/** How often retention runs while the recorder is mounted (it also runs when it starts). */
export const RETENTION_INTERVAL_MS = 60 * 60 * 1000

const DAY_MS = 24 * 60 * 60 * 1000

/**
 * Remove the recordings in `directory` last written more than `retentionDays` ago (0 keeps them all).
 * Only regular files with a recording's name go; a file that vanished meanwhile is no error.
 * Resolves with the names removed.
 */
export async function removeExpiredRecordings(directory: string, retentionDays: number, now = Date.now()): Promise<string[]> {
  if (retentionDays <= 0) return []
  const cutoff = now - retentionDays * DAY_MS
  const removed: string[] = []
  for (const name of await listRecordingNames(directory)) {
    const path = join(directory, name)
    try {
      const stat = await lstat(path)
      if (!stat.isFile() || stat.mtimeMs >= cutoff) continue
      await unlink(path)
      removed.push(name)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
  }
  return removed
}
