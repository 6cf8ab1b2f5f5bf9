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
export { FAMILY_BUILTINS, type PluginImporter } from './compose/builtins'
export { PRESETS, presetPath, type PresetName } from './compose/config-path'
export { CompositionError, loadComposition, type Composition, type LoadOptions } from './compose/load-config'
export type { LogSink } from './compose/log'
export type { HeadlessRequest, HeadlessResponse } from './headless/json-lines'
export { runJsonLines, type JsonLinesOptions } from './headless/runner'
export { connectMcp, type ConnectOptions, type McpConnection } from './mcp/connection'
export { McpHttpServer, type McpHttpOptions } from './mcp/http'
export { parseListenAddress, type ListenAddress } from './mcp/http-address'
export { generateToken } from './mcp/http-auth'
export type { HttpErrorCode } from './mcp/http-errors'
export { createMcpServer, type McpServerOptions } from './mcp/server'
