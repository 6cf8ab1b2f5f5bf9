import { isAbsolute } from 'node:path'
import { MAX_TIMER_MS } from 'dsh-basics'
import { SubprocessError } from './errors'
import {
  type DurableTerminalSpec,
  MAX_ENV_FILE_BYTES,
  MAX_ENV_FILES,
  MAX_TERMINAL_FACTS_BYTES,
  type SpawnWrapper,
  type TerminalLimits,
  type TerminalSpawnSpec,
} from './types'

/** Largest row or column count a PTY window size can carry. */
export const MAX_TERMINAL_SIZE = 65_535

/**
 * Check a spawn spec the same way in every provider, so a bad argument fails with
 * `INVALID_SPEC` before any process exists. Filesystem checks (does `cwd` exist) are the provider's.
 */
export function validateSpawnSpec(spec: TerminalSpawnSpec): void {
  if (typeof spec !== 'object' || spec === null) invalid('the spawn spec must be an object')
  const { argv, cwd, env, rows, cols, graceMs, signal, limits } = spec
  if (!Array.isArray(argv) || argv.length === 0) invalid('argv must be a non-empty array of strings')
  argv.forEach((arg, index) => {
    if (typeof arg !== 'string') invalid(`argv[${index}] must be a string`)
    if (arg.includes('\0')) invalid(`argv[${index}] contains a NUL byte`)
  })
  if (argv[0] === '') invalid('argv[0] (the executable) must not be empty')
  if (typeof cwd !== 'string' || cwd === '' || !isAbsolute(cwd)) invalid(`cwd must be an absolute path, got ${JSON.stringify(cwd)}`)
  if (cwd.includes('\0')) invalid('cwd contains a NUL byte')
  if (env !== undefined) {
    if (typeof env !== 'object' || env === null) invalid('env must be an object of strings')
    for (const [name, value] of Object.entries(env)) {
      if (name === '' || name.includes('=') || name.includes('\0')) invalid(`invalid environment variable name ${JSON.stringify(name)}`)
      if (value !== undefined && typeof value !== 'string') invalid(`environment variable ${name} must be a string or undefined`)
      if (value?.includes('\0')) invalid(`environment variable ${name} contains a NUL byte`)
    }
  }
  if (spec.envFiles !== undefined) validateEnvFiles(spec.envFiles)
  validateTerminalSize(rows, cols)
  if (!Number.isSafeInteger(graceMs) || graceMs < 0 || graceMs > MAX_TIMER_MS) {
    invalid(`graceMs must be an integer between 0 and ${MAX_TIMER_MS}, got ${String(graceMs)}`)
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) invalid('signal must be an AbortSignal')
  if (limits !== undefined) validateLimits(limits)
  const { wrapper } = spec
  if (wrapper !== undefined && (typeof wrapper !== 'object' || wrapper === null || typeof wrapper.key !== 'string' || typeof wrapper.wrap !== 'function')) {
    invalid('wrapper must be an object with a string key and a wrap function')
  }
  if (spec.durable !== undefined) validateDurableSpec(spec.durable)
  if (spec.target !== undefined && !isTargetName(spec.target)) {
    invalid(
      `target must be a name of 1-${MAX_TARGET_NAME_LENGTH} letters, digits, '.', '_' or '-' (starting with a letter or digit), got ${JSON.stringify(spec.target)}`,
    )
  }
}

/** Variables an env file must not set: the dynamic loader's (a file there runs in every program) and the command search list. */
const NOT_A_STARTUP_FILE = /^(?:LD_|DYLD_)|^PATH$/

/** Check {@link TerminalSpawnSpec.envFiles}: well-formed names, string contents within the bounds. */
export function validateEnvFiles(envFiles: unknown): void {
  if (typeof envFiles !== 'object' || envFiles === null || Array.isArray(envFiles))
    invalid('envFiles must be an object of strings (variable name to file content)')
  const entries = Object.entries(envFiles)
  if (entries.length > MAX_ENV_FILES) invalid(`envFiles holds ${entries.length} files; at most ${MAX_ENV_FILES} are allowed`)
  for (const [name, content] of entries) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) invalid(`envFiles: invalid environment variable name ${JSON.stringify(name)}`)
    if (NOT_A_STARTUP_FILE.test(name)) {
      invalid(`envFiles: ${name} cannot name a file (the dynamic loader's LD_*/DYLD_* load it into every program; PATH is a search list); pass it in env`)
    }
    if (typeof content !== 'string') invalid(`envFiles.${name} must be a string (the file's content)`)
    if (Buffer.byteLength(content, 'utf8') > MAX_ENV_FILE_BYTES) invalid(`envFiles.${name} is larger than ${MAX_ENV_FILE_BYTES} bytes`)
  }
}

/** Longest target name (a short label: `build-1`, `pod-7`). */
export const MAX_TARGET_NAME_LENGTH = 63

/** True for a well-formed target name: what a configuration may define and a spawn may name. */
export function isTargetName(name: unknown): name is string {
  return typeof name === 'string' && name.length <= MAX_TARGET_NAME_LENGTH && /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)
}

/** Longest durable key: a session id, never a payload. */
export const MAX_DURABLE_KEY_LENGTH = 256

/** Most output a durable terminal may retain for its adopter (a bound on one session host's memory per terminal). */
export const MAX_RETAIN_BYTES = 256 * 1024 * 1024

/**
 * Check a durable spec (every provider that honours one, and the session host for what crossed the
 * wire): a key of 1–256 characters without NUL, a TTL of 1–2147483647 ms, a positive retain bound.
 */
export function validateDurableSpec(durable: DurableTerminalSpec): void {
  if (typeof durable !== 'object' || durable === null || Array.isArray(durable)) invalid('durable must be an object { key, ttlMs, retainBytes }')
  const { key, ttlMs, retainBytes } = durable
  if (typeof key !== 'string' || key === '' || key.length > MAX_DURABLE_KEY_LENGTH || key.includes('\0')) {
    invalid(`durable.key must be a string of 1-${MAX_DURABLE_KEY_LENGTH} characters without NUL`)
  }
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1 || ttlMs > MAX_TIMER_MS)
    invalid(`durable.ttlMs must be an integer between 1 and ${MAX_TIMER_MS}, got ${String(ttlMs)}`)
  if (!Number.isSafeInteger(retainBytes) || retainBytes < 1 || retainBytes > MAX_RETAIN_BYTES) {
    invalid(`durable.retainBytes must be an integer between 1 and ${MAX_RETAIN_BYTES}, got ${String(retainBytes)}`)
  }
}

/** Check facts for `setFacts`: a string of at most {@link MAX_TERMINAL_FACTS_BYTES} UTF-8 bytes. */
export function validateTerminalFacts(facts: string): void {
  if (typeof facts !== 'string') invalid('facts must be a string')
  const bytes = Buffer.byteLength(facts, 'utf8')
  if (bytes > MAX_TERMINAL_FACTS_BYTES)
    invalid(`facts are ${bytes} UTF-8 bytes; at most ${MAX_TERMINAL_FACTS_BYTES} are kept (store less: what an adopter needs to resume)`)
}

const LIMIT_NAMES: readonly (keyof TerminalLimits)[] = ['maxProcesses', 'maxMemoryBytes']

/** Limits are an object of positive safe integers; an unknown name is refused so a typo cannot drop a cap. */
function validateLimits(limits: TerminalLimits): void {
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) invalid('limits must be an object such as { maxProcesses: 1024 }')
  for (const [name, value] of Object.entries(limits)) {
    if (!(LIMIT_NAMES as readonly string[]).includes(name)) invalid(`limits.${name} is not a known limit; use ${LIMIT_NAMES.join(' or ')}`)
    if (value !== undefined && (!Number.isSafeInteger(value) || (value as number) < 1)) {
      invalid(`limits.${name} must be a positive integer (or left out for no limit), got ${String(value)}`)
    }
  }
}

/** Check a window size (spawn and resize share the bounds). */
export function validateTerminalSize(rows: number, cols: number): void {
  for (const [label, value] of [
    ['rows', rows],
    ['cols', cols],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 1 || value > MAX_TERMINAL_SIZE) {
      invalid(`${label} must be an integer between 1 and ${MAX_TERMINAL_SIZE}, got ${String(value)}`)
    }
  }
}

function invalid(message: string): never {
  throw new SubprocessError('INVALID_SPEC', message)
}

/**
 * What `wrapper` makes of `argv`, checked to be a command (`INVALID_SPEC` otherwise): every provider
 * runs the same check on a wrapper's answer before it spawns it.
 */
export async function wrappedArgv(wrapper: SpawnWrapper, argv: readonly string[]): Promise<readonly string[]> {
  const wrapped: unknown = await wrapper.wrap(argv)
  if (!Array.isArray(wrapped) || wrapped.length === 0 || wrapped[0] === '' || !wrapped.every((arg) => typeof arg === 'string' && !arg.includes('\0'))) {
    throw new SubprocessError('INVALID_SPEC', 'the wrapper did not return a command (a non-empty array of strings without NUL)')
  }
  return wrapped as string[]
}
