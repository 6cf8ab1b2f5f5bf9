export {
  executeProjected,
  toNotificationMessage,
  toolCallFinished,
  toolCallStarted,
  type AcpNotificationMessage,
  type AcpSessionNotification,
  type AcpTextToolContent,
  type AcpToolCallFields,
  type AcpToolCallStatus,
  type AcpToolCallUpdate,
} from './acp/projection'
export { banner, launchCommand, type BannerFacts } from './cli/banner'
export { parseCliArgs, USAGE, type CliRequest, type Command } from './cli/args'
export { startupFailures } from './compose/assert-started'
export { FAMILY_BUILTINS, type PluginImporter } from './compose/builtins'
export {
  compositionsRoot,
  CONFIG_FILE,
  isPresetName,
  PRESETS,
  presetPath,
  repositoryRoot,
  resolveConfigPath,
  SHIPPED_COMPOSITIONS,
  type PresetName,
} from './compose/config-path'
export { readOnlyInclude } from './compose/include'
export { CompositionError, loadComposition, type Composition, type LoadOptions } from './compose/load-config'
export { exportLog, stderrSink, type LogCapture, type LogSink } from './compose/log'
export {
  formatResponse,
  MALFORMED_REQUEST,
  parseRequestLine,
  responseFor,
  type HeadlessRequest,
  type HeadlessResponse,
  type ParsedLine,
} from './headless/json-lines'
export { runJsonLines, type JsonLinesOptions } from './headless/runner'
export { runHeadlessStdio, type HeadlessStdioOptions } from './headless/stdio'
export { annotationsForKind, type ToolHints } from './mcp/annotations'
export { connectMcp, type ConnectOptions, type McpConnection } from './mcp/connection'
export { DEFAULT_MAX_SESSIONS, McpHttpServer, type McpHttpOptions } from './mcp/http'
export {
  DEFAULT_HTTP_HOST,
  DEFAULT_IDLE_TIMEOUT_MS,
  endpointUrl,
  MCP_PATH,
  parseDuration,
  parseListenAddress,
  type ListenAddress,
} from './mcp/http-address'
export { checkBearer, generateToken, originAllowed, resolveToken, TOKEN_ENV, type BearerToken } from './mcp/http-auth'
export { httpBanner, runMcpHttp, type McpHttpRunOptions } from './mcp/http-command'
export type { HttpErrorCode } from './mcp/http-errors'
export { HttpSession, HttpSessions, type SessionCloseReason } from './mcp/http-sessions'
export { DEFAULT_PROGRESS_INTERVAL_MS, startProgress, type ProgressParams } from './mcp/progress'
export { toMcpResult, type McpToolResult } from './mcp/results'
export { createMcpServer, SERVER_NAME, type McpServerOptions } from './mcp/server'
export { runMcpStdio, type McpStdioOptions } from './mcp/stdio'
export { PACKAGE_ROOT } from './package-root'
export { HOST_VERSION } from './version'
