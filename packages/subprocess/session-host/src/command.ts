import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'

/**
 * The argv that starts `dsh-session-host` with this very Node: the built bin beside this module, or,
 * when running from sources (this file is `.ts`), the source bin through tsx's loader, in one
 * process (its pid is the session host's, so a signal to it reaches the session host itself).
 */
export function sessionHostCommand(): string[] {
  const here = import.meta.url
  if (!here.endsWith('.ts')) return [process.execPath, fileURLToPath(new URL('./bin.js', here))]
  const tsx = pathToFileURL(createRequire(here).resolve('tsx')).href
  return [process.execPath, '--import', tsx, '--conditions=dsh-source', fileURLToPath(new URL('./bin.ts', here))]
}
