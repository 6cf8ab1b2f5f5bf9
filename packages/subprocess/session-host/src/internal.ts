/**
 * The session host's own parts, for this repository's tests: the server that the bin runs. Not an
 * API; start the `dsh-session-host` bin (or let dsh-subprocess-remote start it).
 */
export { SessionHost, type SessionHostOptions, SessionHostRunningError } from './server/session-host'
export { ClientConnection } from './server/connection'
export { HostedTerminal } from './server/hosted-terminal'
export { OutputRing } from './server/output-ring'
