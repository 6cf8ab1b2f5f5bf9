import type { Agent } from 'dsh-agent'
import type { SandboxMode, SandboxNetwork } from 'dsh-sandbox'

/** The boundary a process of one owner starts with: its effective mode and the workspace root. */
export interface ResolvedSandboxPolicy {
  /** The owner's session mode if set, else the deployment default. */
  mode: SandboxMode
  /** Canonical (realpath) workspace root of the deployment. */
  workspaceRoot: string
  /** The deployment's network choice for confined processes; absent means the mode's default. */
  network?: SandboxNetwork
  /** Where the `allowlist` network connects (config `allowedHosts`); set only for that network. */
  allowedHosts?: string[]
}

/** A proposed change of an owner's effective mode, shown to listeners before it is committed. */
export interface ModeChange {
  /** The exact owner whose mode would change. */
  owner: Agent
  /** Effective mode now. */
  from: SandboxMode
  /** Effective mode after the change; always different from `from`. */
  to: SandboxMode
}

/**
 * Called before an effective mode change is committed; throw to veto it (the error's message
 * reaches the caller). Must decide synchronously: a returned promise counts as a veto.
 */
export type ModeChangeListener = (change: ModeChange) => void

/** Scope of an owner-bound listener, see `SandboxPolicyService.onModeChange`. */
export interface OwnerListenerOptions {
  /** Only this owner's changes are shown; the listener lives until the owner ends. */
  owner: Agent
  /** A later registration with the same owner and key replaces this one (e.g. after a plugin reload). */
  key?: string
}
