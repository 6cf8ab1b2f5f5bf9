import { z } from 'zod'
import { SubprocessError } from './errors'

/**
 * The parts of an inherited name that mark a credential, matched in any case; the table behind
 * {@link CREDENTIAL_NAME_PATTERN}. A "word" is delimited by anything but a letter (`_`, a digit, the
 * ends), so `PATH` is not `PAT` and `GOPRIVATE` is not `PRIVATE`. A terminal is driven by a model,
 * so anything a process could echo back must not carry secrets by accident: a false positive costs
 * an allow-list entry, a false negative leaks.
 */
const CREDENTIAL_NAME_PARTS: readonly string[] = [
  // KEY, PASS (PASSWORD, PASSWD, PASSPHRASE, npm_config__password), SECRET, TOKEN, CREDENTIAL
  // (AWS_SHARED_CREDENTIALS_FILE, GOOGLE_APPLICATION_CREDENTIALS), COOKIE, BEARER, JWT (CI_JOB_JWT).
  'KEY',
  'PASS',
  'SECRET',
  'TOKEN',
  'CREDENTIAL',
  'COOKIE',
  'BEARER',
  'JWT',
  'WEBHOOK',
  // AUTH: AUTHORIZATION, AUTHENTICATION, OAUTH, SSH_AUTH_SOCK, DOCKER_AUTH_CONFIG, `…:_authToken`;
  // not the AUTHOR that git commits need (AUTHORISATION/AUTHORIZATION still are AUTH).
  'AUTH(?!OR(?!I[SZ]))',
  // Cookie names of server sessions: PHPSESSID, JSESSIONID.
  'SESSID',
  'SESSIONID',
  // Words: GH_PAT, SENTRY_DSN, STRIPE_SK, SSH_PRIVATE, GPG_SIGNING.
  '(?<![A-Z])(?:PAT|DSN|SK|PRIVATE|SIGNING)(?![A-Z])',
  // PWD as a word of a longer name (MYSQL_PWD), never the shell's own PWD (nor OLDPWD, not a word).
  '(?<=[^A-Z])PWD(?![A-Z])|^PWD(?=[^A-Z])',
  // PW as the last word (LDAP_BIND_PW, ROOT_PW2); not a first word (Playwright's PW_TEST_*).
  '(?<![A-Z])PW\\d*$',
  // Pointers to credential stores, which tools read by themselves: a kubeconfig holds cluster
  // credentials, DOCKER_CONFIG registry auths, NETRC passwords, CLOUDSDK_CONFIG and
  // AZURE_CONFIG_DIR cloud tokens. (AWS_PROFILE or AWS_CONFIG_FILE name no secret and pass.)
  'KUBECONFIG',
  '^DOCKER_CONFIG$',
  '(?<![A-Z])NETRC(?![A-Z])',
  '^CLOUDSDK_CONFIG$',
  '^AZURE_CONFIG_DIR$',
]

/**
 * Inherited names that look like credentials, in any case: words such as KEY, PASS, SECRET, TOKEN,
 * AUTH (not AUTHOR), JWT, `_PWD`, `_PW`, `_SK`, and pointers to credential stores such as
 * KUBECONFIG (the full table and its reasons are in this module and the README's "Environment scrub").
 */
export const CREDENTIAL_NAME_PATTERN = new RegExp(CREDENTIAL_NAME_PARTS.join('|'), 'i')

/** The harness's own configuration namespace, never leaked into terminals (not even by an allow-list). */
export const HARNESS_NAME_PATTERN = /^DSH_/i

/**
 * Well-known prefixes of vendor tokens: GitHub (`ghp_`, `github_pat_`, …), GitLab (`glpat-`, …),
 * Slack (`xoxb-`, `xapp-`, …), OpenAI and Anthropic (`sk-`), Stripe (`sk_live_`, `rk_test_`, …),
 * Hugging Face (`hf_`), Google OAuth access tokens (`ya29.`). npm's `npm_` is matched on its own
 * (exactly 36 letters and digits follow), since `npm_` also starts the names of npm's variables.
 */
const TOKEN_PREFIX = '(?:gh[pousr]_|github_pat_|gl(?:pat|dt|rt|ptt|oas)-|xox[abeoprs]-|xapp-|sk-|[sr]k_(?:live|test)_|hf_|ya29\\.)'

/** Query parameters that carry a secret: any name ending in one of the families, or one of the short names. */
const SECRET_QUERY_NAME = '(?:[\\w.-]*[_.-])?(?:token|secret|password|passwd|signature|credential)|pwd|pass|sig|key|auth|(?:api|access|private|secret)[_-]?key'

/**
 * Values that carry a credential whatever their name, matched anywhere in the value:
 * - a URL with a password in its userinfo (`postgres://u:p@host`, `redis://:p@host`); the password
 *   may hold `/`, so `https://host:8080/a@b` is dropped too (a false positive);
 * - a bare `user:password@host` (how proxies are often written);
 * - a connection string with a password or account key field (`Password=`, `Pwd=`, `AccountKey=`);
 * - a URL query with a secret parameter (`?password=`, `&passwd=`, `?pwd=`, `token=`,
 *   `access_token=`, `api_key=`, `apikey=`, `secret=`, `sig=`, `X-Amz-Signature=`);
 * - a URL whose user (no password) is a token: a vendor prefix (`https://ghp_…@github.com`) or an
 *   opaque string of 32 or more characters with a digit (GitHub's classic 40-hex tokens);
 * - a vendor token on its own (`ghp_` plus at least 20 characters, `npm_` plus 36, …);
 * - an incoming-webhook URL, whose path is the credential: Slack `hooks.slack.com/…`, Discord
 *   `discord.com/api/webhooks/…`, and any `/webhook/`, `/webhooks/` or `/webhookb2/` path (Teams);
 * - HTTP authorization: an `Authorization:` header (also `Proxy-Authorization:`), `Bearer <token>`,
 *   or `Basic <base64>` (base64 that mixes case or holds a digit, `+` or `/`: not "Basic usage").
 */
export const CREDENTIAL_VALUE_PATTERNS: readonly RegExp[] = [
  /[a-z][a-z0-9+.-]*:\/\/[^\s/?#@:]*:[^\s@]*@/i,
  /^[^\s/?#@:]+:[^\s/@]+@[^\s/@]/,
  /(?:^|;)\s*(?:password|pwd|accountkey|sharedaccesskey|sharedaccesssignature)\s*=/i,
  new RegExp(`[?&;](?:${SECRET_QUERY_NAME})=[^&#\\s]`, 'i'),
  new RegExp(`[a-z][a-z0-9+.-]*://(?:${TOKEN_PREFIX}[^\\s/?#@:]*|(?=[^\\s/?#@:]*\\d)[\\w.~-]{32,})@`, 'i'),
  new RegExp(`(?<![\\w-])(?:${TOKEN_PREFIX}[\\w-]{20,}|npm_[A-Za-z0-9]{36}(?!\\w))`),
  /(?:^|[\s/@.])hooks\.slack\.com\/\S|discord(?:app)?\.com\/api\/webhooks\/\S|[a-z]:\/\/[^\s/]+\/(?:\S*\/)?webhook(?:s|b2)?\/[^\s/?#]/i,
  /(?:^|[^\w-])(?:proxy-)?authorization\s*:|\bbearer\s+[\w.~+/-]{8,}/i,
  /\b(?:Basic|basic|BASIC)\s+(?=[A-Za-z0-9+/]*(?:[a-z][A-Z]|[0-9+/]))[A-Za-z0-9+/]{4,}={0,2}(?![\w+/=])/,
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

/** Most verdicts {@link scrubEnvironment} remembers; past it the memory starts over. */
const MAX_REMEMBERED_VERDICTS = 4096

/**
 * {@link isScrubbed}'s verdict per inherited name for the value it was given: every spawn scrubs
 * the same host environment, and the credential patterns cost far more than one string comparison.
 * A changed value is judged again.
 */
const rememberedVerdicts = new Map<string, { readonly value: string; readonly scrubbed: boolean }>()

function isScrubbedRemembered(name: string, value: string): boolean {
  const known = rememberedVerdicts.get(name)
  if (known !== undefined && known.value === value) return known.scrubbed
  const scrubbed = isScrubbed(name, value)
  if (rememberedVerdicts.size >= MAX_REMEMBERED_VERDICTS) rememberedVerdicts.clear()
  rememberedVerdicts.set(name, { value, scrubbed })
  return scrubbed
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
    if (!allow.has(name) && isScrubbedRemembered(name, value)) continue
    env[name] = value
  }
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name]
    else env[name] = value
  }
  return env
}

/**
 * The `envAllow` field of a provider's config: names let through the scrub as they are, each checked
 * by {@link envAllowProblem} (never `DSH_*`, never a credential name). Every provider takes the same.
 */
export const EnvAllowSchema = z
  .array(
    z.string().superRefine((name, ctx) => {
      const problem = envAllowProblem(name)
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem })
    }),
  )
  .default([])
