/**
 * The command's parts, for this repository's tests and benchmarks: argument parsing and the banner,
 * the config-path rules, the include and startup checks, the log export, the headless line format
 * and stdio loop, the MCP mapping, the HTTP host's address, auth, session and progress parts, and
 * the stdio runners. Not the package's API — that is `dsh-terminal-mcp`'s index; these names may
 * change in any release.
 */
export { banner, launchCommand, type BannerFacts } from './cli/banner'
export { parseCliArgs, USAGE, type CliRequest, type Command } from './cli/args'
export { startupFailures } from './compose/assert-started'
export { compositionsRoot, CONFIG_FILE, isPresetName, repositoryRoot, resolveConfigPath, SHIPPED_COMPOSITIONS } from './compose/config-path'
export { readOnlyInclude } from './compose/include'
export { exportLog, stderrSink, type LogCapture } from './compose/log'
export { formatResponse, MALFORMED_REQUEST, parseRequestLine, responseFor, type ParsedLine } from './headless/json-lines'
export { runHeadlessStdio, type HeadlessStdioOptions } from './headless/stdio'
export { annotationsForKind, type ToolHints } from './mcp/annotations'
export { DEFAULT_MAX_SESSIONS } from './mcp/http'
export { DEFAULT_HTTP_HOST, DEFAULT_IDLE_TIMEOUT_MS, endpointUrl, MCP_PATH, parseDuration } from './mcp/http-address'
export { checkBearer, originAllowed, resolveToken, TOKEN_ENV, type BearerToken } from './mcp/http-auth'
export { httpBanner, runMcpHttp, type McpHttpRunOptions } from './mcp/http-command'
export { HttpSession, HttpSessions, type SessionCloseReason } from './mcp/http-sessions'
export { DEFAULT_PROGRESS_INTERVAL_MS, startProgress, type ProgressParams } from './mcp/progress'
export { toMcpResult, type McpToolResult } from './mcp/results'
export { SERVER_NAME } from './mcp/server'
export { runMcpStdio, type McpStdioOptions } from './mcp/stdio'
export { PACKAGE_ROOT } from './package-root'
export { HOST_VERSION } from './version'
