import { SubprocessError } from './errors'

/**
 * Inherited names that look like credentials, in any case. A terminal is driven by a model, so
 * anything a process could echo back must not carry secrets by accident; a false positive costs an
 * allow-list entry, a false negative leaks. Families: `KEY`, `PASS` (PASSWORD, PASSWD, PASSPHRASE,
 * `npm_config__password`), `SECRET`, `TOKEN`, `CREDENTIAL`, `AUTH` (AUTHORIZATION, OAUTH,
 * `SSH_AUTH_SOCK`, `DOCKER_AUTH_CONFIG`, `NPM_CONFIG__AUTH`, `…:_authToken`) except the `AUTHOR`
 * that git commits need, `COOKIE`, `BEARER`, `SESSID`/`SESSIONID` (cookie names such as PHPSESSID),
 * and the words `PAT` and `DSN` (`GH_PAT`, `SENTRY_DSN`; not PATH).
 */
export const CREDENTIAL_NAME_PATTERN =
  /KEY|PASS|SECRET|TOKEN|CREDENTIAL|AUTH(?!OR(?!I[SZ]))|COOKIE|BEARER|SESSID|SESSIONID|(?<![A-Z])PAT(?![A-Z])|(?<![A-Z])DSN(?![A-Z])/i

/** The harness's own configuration namespace, never leaked into terminals (not even by an allow-list). */
export const HARNESS_NAME_PATTERN = /^DSH_/i

/**
 * Values that carry a password whatever their name: a URL with a password in its userinfo
 * (`postgres://u:p@host`, `redis://:p@host`, anywhere in the value), a bare `user:password@host`
 * (how proxies are often written), and a connection string with a password or account key field.
 * The password part may hold `/`, so `https://host:8080/a@b` is dropped too (a false positive).
 */
export const CREDENTIAL_VALUE_PATTERNS: readonly RegExp[] = [
  /[a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*:[^\s@]*@/i,
  /^[^\s/?#@:]+:[^\s/@]+@[^\s/@]/,
  /(?:^|;)\s*(?:password|pwd|accountkey|sharedaccesskey|sharedaccesssignature)\s*=/i,
]

/** Options of {@link scrubEnvironment}. */
export interface ScrubOptions {
  /**
   * Inherited names kept whatever their name or value looks like: exact, case-sensitive names, for a
   * deployment that wants one through. `DSH_*` names cannot be allowed (see {@link envAllowProblem}).
   */
  readonly allow?: readonly string[]
}

/** True when an inherited variable of this name is dropped by {@link scrubEnvironment}, whatever its value. */
export function isScrubbedName(name: string): boolean {
  return CREDENTIAL_NAME_PATTERN.test(name) || HARNESS_NAME_PATTERN.test(name)
}

/** True when a value carries a credential by its shape ({@link CREDENTIAL_VALUE_PATTERNS}). */
export function isCredentialValue(value: string): boolean {
  return CREDENTIAL_VALUE_PATTERNS.some((pattern) => pattern.test(value))
}

/**
 * True when {@link scrubEnvironment} drops this inherited variable unless it is allow-listed: its
 * name is credential-shaped or `DSH_*`, or its value carries a credential.
 */
export function isScrubbed(name: string, value: string | undefined): boolean {
  return isScrubbedName(name) || (value !== undefined && isCredentialValue(value))
}

/**
 * Why `name` cannot be an allow-list entry, or `undefined` when it can. Shared by providers'
 * config validation and {@link scrubEnvironment}. `DSH_*` is refused: it is the harness's own
 * namespace, and a terminal that needs such a value gets it explicitly through `spec.env`.
 */
export function envAllowProblem(name: string): string | undefined {
  if (name.length === 0) return 'an allowed name must not be empty'
  if (name.includes('=')) return `allowed name ${JSON.stringify(name)} contains "=", which no environment name can`
  if (name.includes('\0')) return `allowed name ${JSON.stringify(name)} contains a NUL byte, which no environment name can`
  if (HARNESS_NAME_PATTERN.test(name)) return `allowed name ${JSON.stringify(name)} is in the harness's own DSH_* namespace, which the allow-list cannot open`
  return undefined
}

/**
 * The environment a terminal starts with: the inherited variables minus scrubbed ones
 * ({@link isScrubbed}) that are not in `options.allow`, then the explicit overrides, which win
 * (`undefined` removes a name). An invalid allow entry throws `INVALID_SPEC`.
 */
export function scrubEnvironment(
  inherited: Readonly<Record<string, string | undefined>>,
  overrides: Readonly<Record<string, string | undefined>> = {},
  options: ScrubOptions = {},
): Record<string, string> {
  const allow = new Set(options.allow ?? [])
  for (const name of allow) {
    const problem = envAllowProblem(name)
    if (problem !== undefined) throw new SubprocessError('INVALID_SPEC', problem)
  }
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(inherited)) {
    if (value === undefined) continue
    if (!allow.has(name) && isScrubbed(name, value)) continue
    env[name] = value
  }
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name]
    else env[name] = value
  }
  return env
}
