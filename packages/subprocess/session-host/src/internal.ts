/**
 * The session host's own parts, for this repository's tests: the server that the bin runs and the
 * protocol's constants. Not an API; start the `dsh-session-host` bin (or let dsh-subprocess-remote
 * start it), and speak the protocol through the main entry's codec.
 */
export { SessionHost, type SessionHostOptions, SessionHostRunningError } from './server/session-host'
export { ClientConnection } from './server/connection'
export { HostedTerminal } from './server/hosted-terminal'
export { OutputRing } from './server/output-ring'
export { FATAL_CODES } from './protocol/errors'
export { CONTROL_FRAME, encodeInput, MAX_OUTPUT_PER_FRAME, OUTPUT_FRAME } from './protocol/frames'
export { FEATURES } from './protocol/messages'
export { DEFAULT_IDLE_EXIT_MS, DEFAULT_WINDOW_BYTES } from './defaults'
export { assertOwnSocket, assertPrivateDir, ensureSocketDir } from './runtime-dir'
export type { LocalSocketOptions } from './local-start'
export type { PingMessage, PongMessage } from './protocol/messages'
