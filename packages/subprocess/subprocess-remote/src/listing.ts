import type { DetachedTerminal, UnreachableTarget } from 'dsh-subprocess'
import { errorMessage } from 'dsh-basics'
import type { ListResult } from 'dsh-session-host'
import type { TargetLink } from './target-link'

/** What {@link listEveryTarget} found: the detached terminals, each with its target, and the targets that did not answer. */
export interface TargetListing {
  readonly terminals: readonly DetachedTerminal[]
  readonly unreachable: readonly UnreachableTarget[]
}

/**
 * Ask every target in parallel for its detached terminals, connecting to those not connected yet.
 * The default target (first) is asked without a deadline and its failure is the listing's; every
 * other one has `deadlineMs` for its connection and answer, and one that misses it (or fails) is
 * named as unreachable instead of holding the listing up. Its connection attempt goes on for the next call.
 */
export async function listEveryTarget(links: readonly TargetLink[], deadlineMs: number): Promise<TargetListing> {
  const unreachable: UnreachableTarget[] = []
  const lists = await Promise.all(
    links.map(async (link, index) => {
      const asking = (async () => {
        const { terminals } = (await (await link.client()).request('list', {})) as ListResult
        return terminals.map((terminal) => ({ ...terminal, target: link.name }))
      })()
      if (index === 0) return asking
      try {
        return await withDeadline(asking, deadlineMs, `no answer within ${deadlineMs} ms`)
      } catch (error) {
        unreachable.push({ target: link.name, reason: errorMessage(error) })
        return []
      }
    }),
  )
  return { terminals: lists.flat(), unreachable }
}

/** `promise`, or a rejection with `why` once `ms` passed (the promise itself goes on; its later failure is ignored). */
function withDeadline<T>(promise: Promise<T>, ms: number, why: string): Promise<T> {
  promise.catch(() => undefined)
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(why)), ms)
    timer.unref()
  })
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer))
}
