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

/** Every network choice, as a runtime list for validation and docs. */
export const SANDBOX_NETWORKS = ['none', 'host', 'allowlist'] as const

/**
 * Whether a confined process reaches the network: `none` leaves it only a loopback interface,
 * `host` shares the host's network, `allowlist` gives it no network but a proxy of the host's that
 * connects only to `allowedHosts`. Egress is deployment policy, so it is a switch of its own.
 */
export type SandboxNetwork = (typeof SANDBOX_NETWORKS)[number]

/** Zod schema for a network choice, shared by every config that names one. */
export const SandboxNetworkSchema = z.enum(SANDBOX_NETWORKS)

/** What a provider confines a command to; paths are absolute and should be canonical (realpath). */
export interface SandboxPolicy {
  /** The confinement to apply. */
  mode: ConfinedMode
  /** The directory the command may write under `workspace-write` (read-only under `read-only`). */
  workspaceRoot: string
  /** Working directory inside the sandbox; omitted means the provider's default. */
  cwd?: string
  /** Network reach; omitted means the mode's default (see {@link defaultNetwork}). */
  network?: SandboxNetwork
  /**
   * Where `allowlist` lets connections through (see `parseHostPattern`: `github.com`,
   * `*.npmjs.org`, `github.com:22`); ignored by the other networks. Empty: nothing is reachable.
   */
  allowedHosts?: string[]
  /**
   * Host files the command must be able to read although the sandbox may hide where they lie (a
   * private `/tmp`), e.g. a startup file the host ships. Regular files only, read-only, visible at
   * their canonical path; they never make anything writable.
   */
  readableFiles?: string[]
}

/** The network a mode gets when the policy names none: `read-only` none, `workspace-write` the host's. */
export function defaultNetwork(mode: ConfinedMode): SandboxNetwork {
  return mode === 'read-only' ? 'none' : 'host'
}

/** Narrow an unknown value to a {@link SandboxMode}, e.g. before trusting external input. */
export function isSandboxMode(value: unknown): value is SandboxMode {
  return typeof value === 'string' && (SANDBOX_MODES as readonly string[]).includes(value)
}

/** True for the modes that must go through a sandbox provider before a process starts. */
export function isConfinedMode(mode: SandboxMode): mode is ConfinedMode {
  return mode !== 'danger-full-access'
}
