import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * Vitest global setup: sandboxed sessions keep a private home per workspace under
 * `$XDG_STATE_HOME/dsh-terminal/homes`; tests point that at a directory of their own, removed
 * afterwards, so a run never leaves homes in the real `~/.local/state`.
 */
export default function setup(): () => void {
  const previous = process.env.XDG_STATE_HOME
  const state = mkdtempSync(join(tmpdir(), 'dsh-test-state-'))
  process.env.XDG_STATE_HOME = state
  return () => {
    rmSync(state, { recursive: true, force: true })
    if (previous === undefined) delete process.env.XDG_STATE_HOME
    else process.env.XDG_STATE_HOME = previous
  }
}
