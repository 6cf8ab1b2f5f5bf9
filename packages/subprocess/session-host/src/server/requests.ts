import { type DurableTerminalSpec, SubprocessError, type TerminalSpawnSpec, validateDurableSpec, validateEnvFiles } from 'dsh-subprocess'
import { writeEnvFiles } from './env-files'
import { isPositiveInteger, type RequestParams, type SpawnParams } from '../protocol/messages'

/** A request's params that are not an object of the right shape: the seam's own `INVALID_SPEC`. */
function invalid(message: string): never {
  throw new SubprocessError('INVALID_SPEC', message)
}

/** The terminal number of any request's params, checked. */
export function terminalOf(params: unknown): number {
  const terminal = (params as { terminal?: unknown } | undefined)?.terminal
  if (!isPositiveInteger(terminal)) invalid('params.terminal must be a positive integer')
  return terminal
}

/** Check that `params` is an object. */
export function paramsObject(params: unknown): Record<string, unknown> {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) invalid('params must be an object')
  return params as Record<string, unknown>
}

/**
 * The spawn spec for the local provider from a spawn request. The environment sent is the whole
 * environment: every name this process inherited is removed first, so none of the session host's
 * own environment reaches the program (see PROTOCOL.md, "Environment"). `envFiles` are written on
 * this machine and their variables set to the paths.
 */
export function spawnSpecOf(params: unknown, signal: AbortSignal): TerminalSpawnSpec {
  const spawn = paramsObject(params) as Partial<SpawnParams>
  const env = spawn.env
  if (typeof env !== 'object' || env === null || Array.isArray(env)) invalid('params.env must be an object of strings (the complete environment)')
  for (const [name, value] of Object.entries(env)) if (typeof value !== 'string') invalid(`params.env.${name} must be a string`)
  const exact: Record<string, string | undefined> = {}
  for (const name of Object.keys(process.env)) exact[name] = undefined
  Object.assign(exact, env)
  // Files the program needs here (a startup file of this install): written now, their paths win over `env`.
  if (spawn.envFiles !== undefined) {
    validateEnvFiles(spawn.envFiles)
    Object.assign(exact, writeEnvFiles(spawn.envFiles))
  }
  // The provider validates the rest (argv, cwd, sizes, grace, limits) exactly as in process.
  return {
    argv: spawn.argv as string[],
    cwd: spawn.cwd as string,
    env: exact,
    rows: spawn.rows as number,
    cols: spawn.cols as number,
    graceMs: spawn.graceMs as number,
    signal,
    ...(spawn.limits === undefined ? {} : { limits: spawn.limits }),
  }
}

/**
 * The durable part of a spawn request, checked (the local provider refuses `durable`: the session
 * host keeps the terminal itself); undefined for an ordinary spawn.
 */
export function durableOf(params: unknown): DurableTerminalSpec | undefined {
  const durable = paramsObject(params).durable
  if (durable === undefined) return undefined
  validateDurableSpec(durable as DurableTerminalSpec)
  const { key, ttlMs, retainBytes } = durable as DurableTerminalSpec
  return { key, ttlMs, retainBytes }
}

/** The key of an `adopt` request, checked. */
export function adoptKeyOf(params: unknown): string {
  const key = paramsObject(params).key
  if (typeof key !== 'string' || key === '') invalid("params.key must be the durable terminal's key (a non-empty string)")
  return key
}

/** Decode a write's base64 data. */
export function writeDataOf(params: RequestParams['write']): Buffer {
  if (typeof params.data !== 'string') invalid('params.data must be a base64 string')
  return Buffer.from(params.data, 'base64')
}
