import { reserveStdout, waitForShutdown } from '../cli/lifecycle'
import { loadComposition } from '../compose/load-config'
import { startHumanAccess } from '../human/host-access'
import { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_QUIET_IDLE_TIMEOUT_MS, formatHostPort, isLoopbackHost, isWildcardHost, type ListenAddress } from './http-address'
import { type BearerToken, resolveToken, TOKEN_ENV } from './http-auth'
import { McpHttpServer } from './http'
import { errorMessage, formatDuration } from 'dsh-basics'

/** Options of {@link runMcpHttp}. */
export interface McpHttpRunOptions {
  /** The cordis.yml to serve. */
  configPath: string
  /** Where to listen (`--http`). */
  address: ListenAddress
  /** `--idle-timeout`; 0 = never. Default 30 min. */
  idleTimeoutMs?: number
  /** `--idle-timeout-quiet`; 0 = off. Default 5 min. */
  quietIdleTimeoutMs?: number
  /** Gap between progress notifications of a long call. */
  progressIntervalMs?: number
  /** `--web [port]`: also serve the browser view of the sessions (0 = a free port). */
  web?: number
  /** `--metrics-without-token`: `GET /metrics` answers without the bearer token. */
  metricsWithoutToken?: boolean
}

/** Facts the HTTP startup message shows. */
export interface HttpBannerFacts {
  url: string
  bound: ListenAddress
  token: BearerToken
  idleTimeoutMs: number
  /** The shorter idle timeout of a session holding no work; 0 = off (absent: off). */
  quietIdleTimeoutMs?: number
  configPath: string
  workspace: string
}

/**
 * `dsh-terminal mcp --http`: serve the composition over MCP Streamable HTTP until SIGINT/SIGTERM/
 * SIGHUP, then close every session and return 0. The URL and token go to stderr; stdout stays empty.
 */
export async function runMcpHttp(options: McpHttpRunOptions): Promise<number> {
  reserveStdout()
  const fail = (error: unknown) => process.stderr.write(`dsh-terminal mcp: ${errorMessage(error)}\n`)
  let token: BearerToken
  try {
    token = resolveToken()
  } catch (error) {
    fail(error)
    return 2
  }
  const composition = await loadComposition({ configPath: options.configPath }).catch((error: unknown) => void fail(error))
  if (!composition) return 1
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS
  const quietIdleTimeoutMs = options.quietIdleTimeoutMs ?? DEFAULT_QUIET_IDLE_TIMEOUT_MS
  const log = (line: string) => process.stderr.write(`dsh-terminal mcp: ${line}\n`)
  let server: McpHttpServer
  try {
    const metrics = options.metricsWithoutToken ? 'open' : 'token'
    server = await McpHttpServer.start(composition, { ...options, token: token.value, idleTimeoutMs, quietIdleTimeoutMs, log, metrics })
  } catch (error) {
    fail(error)
    await composition.dispose().catch(fail)
    return 1
  }
  const shutdown = waitForShutdown(process.stdout)
  const human = await startHumanAccess(composition, 'mcp', options.web !== undefined ? { web: options.web } : {})
  process.stderr.write(
    httpBanner({
      url: server.url,
      bound: server.address,
      token,
      idleTimeoutMs,
      quietIdleTimeoutMs,
      configPath: composition.configPath,
      workspace: process.cwd(),
    }),
  )
  await shutdown
  let code = 0
  await human.close()
  await server.close().catch((error: unknown) => {
    code = 1
    fail(`closing the sessions failed: ${errorMessage(error)}`)
  })
  await composition.dispose().catch((error: unknown) => {
    code = 1
    fail(`unloading failed: ${errorMessage(error)}`)
  })
  return code
}

/**
 * The startup message on stderr: where to connect, the token (or where it comes from), the exact
 * Claude Code command, and how sessions end. Printed whether or not stderr is a terminal.
 */
export function httpBanner(facts: HttpBannerFacts): string {
  const generated = facts.token.source === 'generated'
  // A shell expands the variable; JSON never does, so a JSON config gets a placeholder to replace.
  const bearer = `Bearer ${generated ? facts.token.value : `$${TOKEN_ENV}`}`
  const jsonBearer = `Bearer ${generated ? facts.token.value : `<${TOKEN_ENV}>`}`
  const json = JSON.stringify({ mcpServers: { 'dsh-terminal': { type: 'http', url: facts.url, headers: { Authorization: jsonBearer } } } })
  const quiet = facts.quietIdleTimeoutMs ?? 0
  const idle =
    facts.idleTimeoutMs <= 0
      ? 'never when idle (--idle-timeout 0)'
      : quiet > 0 && quiet < facts.idleTimeoutMs
        ? `after ${formatDuration(quiet)} without a request or open stream (${formatDuration(facts.idleTimeoutMs)} while a terminal runs a command, a job runs or someone is attached)`
        : `after ${formatDuration(facts.idleTimeoutMs)} without a request or open stream`
  // A wildcard bind listens on every interface; the URL is how a client on this machine reaches it.
  const listening = isWildcardHost(facts.bound.host)
    ? `listening on ${formatHostPort(facts.bound)} (every interface); on this machine: ${facts.url}`
    : `listening on ${facts.url}`
  const codexToken = generated ? `; Codex must run with ${TOKEN_ENV}=${facts.token.value} in its environment` : ''
  const lines = [
    `dsh-terminal: MCP over Streamable HTTP, ${listening}`,
    generated ? `  token: ${facts.token.value}  (generated for this run; set ${TOKEN_ENV} to choose one)` : `  token: from ${TOKEN_ENV}`,
    '',
    `  Claude Code:  claude mcp add --transport http dsh-terminal ${facts.url} --header "Authorization: ${bearer}"`,
    `  Codex:        codex mcp add dsh-terminal --url ${facts.url} --bearer-token-env-var ${TOKEN_ENV}${codexToken}`,
    generated
      ? `  Any client (JSON config): ${json}`
      : `  Any client (JSON config; JSON expands no variables, so write the value of ${TOKEN_ENV} for <${TOKEN_ENV}>): ${json}`,
    '',
    `  Each MCP session is one agent. Its terminals and jobs close when the client ends the session (DELETE), ${idle}, or when this server stops (Ctrl-C).`,
    `  composition: ${facts.configPath}`,
    `  workspace:   ${facts.workspace}`,
  ]
  if (!isLoopbackHost(facts.bound.host)) {
    lines.push(
      `  warning: bound to ${facts.bound.host}, reachable beyond this machine. Anyone with the token gets a shell, and plain HTTP sends the token unencrypted.`,
    )
  }
  return `${lines.join('\n')}\n`
}
