import type { Agent } from 'dsh-agent'
import type { ModeChange, SandboxPolicyService } from 'dsh-sandbox-policy'
import type { TerminalSessionService } from 'dsh-terminal'

/**
 * Key of the owner-bound fence on `ctx.sandboxPolicy`: a later spawn (also one by a reloaded
 * backend) replaces the earlier registration instead of stacking another.
 */
export const MODE_FENCE_KEY = 'dsh-terminal-bash'

/** Why the fence refused a mode change; `ctx.sandboxPolicy` reports it as `MODE_CHANGE_VETOED`. */
export const MODE_FENCE_MESSAGE =
  'cannot change sandbox mode while persistent terminal sessions are open or being created; wait for creation to settle and close them first'

/** The part of `ctx.sandboxPolicy` the fence registers on. */
export type FencePolicy = Pick<SandboxPolicyService, 'onModeChange'>

/** The part of `ctx.terminals` the fence asks: does the owner have a session, or a spawn under way? */
export type FenceActivity = Pick<TerminalSessionService, 'hasOwnerActivity'>

/**
 * Fence one owner: while it has any open session, unpublished spawn or unreported cleanup failure
 * in `terminals`, every change of its effective sandbox mode is vetoed (a same-mode write never
 * reaches listeners, so it passes). Owner-bound: the fence lives until the owner ends, so it
 * outlives an unload of the backend plugin whose sessions stay open in `ctx.terminals`. Register it
 * before the spawn can be seen by anyone (synchronously, at the start of `spawn`): the pending
 * spawn is already owner activity, so no change can commit between the policy being resolved and
 * the session being published. Throws `OWNER_NOT_LIVE` for an owner that ended.
 */
export function fenceOwner(policy: FencePolicy, terminals: FenceActivity, owner: Agent): void {
  policy.onModeChange(
    () => {
      if (terminals.hasOwnerActivity(owner)) throw new Error(MODE_FENCE_MESSAGE)
    },
    { owner, key: MODE_FENCE_KEY },
  )
}

/**
 * The same rule for every owner, for as long as the registering plugin lives (the returned
 * disposer removes it earlier). It covers what the owner-bound fence cannot: a policy plugin that
 * was reloaded under open sessions forgot every owner listener, and the backend, which re-applies
 * once the new policy is provided, fences all owners again at once instead of at their next spawn.
 */
export function fenceAllOwners(policy: FencePolicy, terminals: FenceActivity): () => void {
  return policy.onModeChange((change: ModeChange) => {
    if (terminals.hasOwnerActivity(change.owner)) throw new Error(MODE_FENCE_MESSAGE)
  })
}
