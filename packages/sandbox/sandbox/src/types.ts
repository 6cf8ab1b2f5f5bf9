import { z } from 'zod'

/** Every sandbox mode, from the narrowest to the explicit unconfined choice. */
export const SANDBOX_MODES = ['read-only', 'workspace-write', 'danger-full-access'] as const

/**
 * How far a process may reach. `read-only` and `workspace-write` are confined by a sandbox provider;
 * `danger-full-access` is the explicit unconfined choice and never reaches a provider.
 */
export type SandboxMode = (typeof SANDBOX_MODES)[number]

/** The modes a sandbox provider enforces: every mode except `danger-full-access`. */
export type ConfinedMode = Exclude<SandboxMode, 'danger-full-access'>

/** Zod schema for a sandbox mode, shared by every config that names one. */
export const SandboxModeSchema = z.enum(SANDBOX_MODES)

/** What a provider confines a command to; paths are absolute and should be canonical (realpath). */
export interface SandboxPolicy {
  /** The confinement to apply. */
  mode: ConfinedMode
  /** The directory the command may write under `workspace-write` (read-only under `read-only`). */
  workspaceRoot: string
  /** Working directory inside the sandbox; omitted means the provider's default. */
  cwd?: string
}

/** Narrow an unknown value to a {@link SandboxMode}, e.g. before trusting external input. */
export function isSandboxMode(value: unknown): value is SandboxMode {
  return typeof value === 'string' && (SANDBOX_MODES as readonly string[]).includes(value)
}

/** True for the modes that must go through a sandbox provider before a process starts. */
export function isConfinedMode(mode: SandboxMode): mode is ConfinedMode {
  return mode !== 'danger-full-access'
}
