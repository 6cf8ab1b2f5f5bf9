import { readFile } from 'node:fs/promises'

/** Where Linux ≥ 6.2 exposes whether unprivileged TIOCSTI (terminal input injection) is allowed. */
export const LEGACY_TIOCSTI_SYSCTL = '/proc/sys/dev/tty/legacy_tiocsti'

/** What the host allows for TIOCSTI, and how we know. */
export interface TiocstiFact {
  /** True when a process may push bytes into the input queue of its controlling terminal. */
  enabled: boolean
  /** Human-readable origin of the answer, for logs and errors. */
  detail: string
}

/**
 * Read `dev.tty.legacy_tiocsti`. A kernel without the knob predates it and always allows TIOCSTI;
 * an unreadable or unexpected value is reported as enabled, so a `refuse` policy fails closed.
 */
export async function readLegacyTiocsti(path = LEGACY_TIOCSTI_SYSCTL): Promise<TiocstiFact> {
  let raw: string
  try {
    raw = (await readFile(path, 'utf8')).trim()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return { enabled: true, detail: `${path} is absent: the kernel predates it and allows TIOCSTI` }
    return { enabled: true, detail: `${path} is unreadable (${code ?? String(error)}): assuming TIOCSTI is allowed` }
  }
  if (raw === '0') return { enabled: false, detail: 'dev.tty.legacy_tiocsti=0' }
  if (raw === '1') return { enabled: true, detail: 'dev.tty.legacy_tiocsti=1' }
  return { enabled: true, detail: `unexpected dev.tty.legacy_tiocsti value ${JSON.stringify(raw)}: assuming TIOCSTI is allowed` }
}
