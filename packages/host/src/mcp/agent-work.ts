import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from 'dsh-agent'
import { withTimeout } from 'dsh-basics'

/** How long one terminal's input-state look may take before it counts as busy (the safe side). */
const LOOK_WAIT_MS = 2_000

/**
 * Whether `agent` still has work a client would come back for: a running job, a terminal that runs
 * a command (its input state `busy`, or unknown), or a person attached to one of its terminals. An
 * HTTP session idle without any of these may close sooner (see `HttpSession`).
 */
export async function holdsWork(root: Context, agent: Agent): Promise<boolean> {
  const jobs = root.get('jobs') as Context['jobs'] | undefined
  try {
    if (jobs?.list(agent).some((job) => job.status === 'running')) return true
  } catch {
    return false // the agent ended meanwhile: nothing of it is left to keep
  }
  const terminals = root.get('terminals') as Context['terminals'] | undefined
  if (!terminals) return false
  let snapshots
  try {
    snapshots = terminals.list(agent)
  } catch {
    return false
  }
  // Detached sessions are listed to every agent but held by none: they are not this agent's work.
  const live = snapshots.filter((snapshot) => snapshot.status.kind === 'running' && snapshot.detachedAt === undefined)
  if (live.some((snapshot) => snapshot.human !== undefined)) return true
  const looks = live.map((snapshot) =>
    withTimeout(
      terminals.inputState(agent, snapshot.sessionId).catch(() => undefined),
      LOOK_WAIT_MS,
      () => undefined,
    ),
  )
  return (await Promise.all(looks)).some((input) => input === undefined || input.kind === 'busy')
}
