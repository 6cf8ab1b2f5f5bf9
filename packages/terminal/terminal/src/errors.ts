import type { Agent } from 'dsh-agent'
import { errorMessage } from 'dsh-basics'

/** Every code a `TerminalError` can carry, as a runtime list for routing and docs. */
export const TERMINAL_ERROR_CODES = [
  'NO_BACKEND',
  'NO_SESSION',
  'FOREIGN_SESSION',
  'SEND_ACTIVE',
  'OWNER_NOT_LIVE',
  'DUPLICATE_NAME',
  'DUPLICATE_BACKEND',
  'SERVICE_DISPOSING',
  'INVALID_REQUEST',
  'SESSION_LIMIT',
  'TEXT_TOO_LARGE',
  'HUMAN_ACTIVE',
  'HUMAN_WRITER_TAKEN',
  'NOT_WATCHABLE',
  'SESSION_ADOPTED',
  'SESSION_HOST_LOST',
] as const

/** Stable code of a registry refusal; route on this, never on the message. */
export type TerminalErrorCode = (typeof TERMINAL_ERROR_CODES)[number]

/** A refusal by `ctx.terminals`; its message is safe to show to a model. */
export class TerminalError extends Error {
  constructor(
    /** Why the registry refused. */
    readonly code: TerminalErrorCode,
    message: string,
  ) {
    super(message)
    this.name = 'TerminalError'
  }
}

/**
 * A backend's spawn failed and so did its own cleanup of partial resources. Lets the service keep
 * the cleanup failure for disposal without replacing a caller's cancellation reason.
 */
export class TerminalBackendCleanupError extends AggregateError {
  constructor(
    /** Why the spawn failed (often the abort reason). */
    readonly spawnError: unknown,
    /** Why releasing the partial resources failed. */
    readonly cleanupError: unknown,
    message = `PTY spawn failed and its cleanup failed too: ${errorMessage(cleanupError)}`,
  ) {
    super([spawnError, cleanupError], message)
    this.name = 'TerminalBackendCleanupError'
  }
}

/** Constructors for each refusal, so every message is written in exactly one place. */
export const refuse = {
  noBackend: (type: string) => new TerminalError('NO_BACKEND', `no PTY backend registered for ${JSON.stringify(type)}`),
  noSession: (id: string, namedId?: string) =>
    new TerminalError('NO_SESSION', namedId ? `unknown PTY session ${id}; "${id}" is the name of session ${namedId}, use its id` : `unknown PTY session ${id}`),
  closing: (id: string) => new TerminalError('NO_SESSION', `PTY session ${id} is closing`),
  foreign: (id: string) => new TerminalError('FOREIGN_SESSION', `PTY session ${id} belongs to another agent`),
  sendActive: (id: string) => new TerminalError('SEND_ACTIVE', `PTY session ${id} already has an active send`),
  ownerNotLive: (owner: Agent) => new TerminalError('OWNER_NOT_LIVE', `agent ${owner.id} is not a live PTY owner`),
  duplicateName: (name: string) => new TerminalError('DUPLICATE_NAME', `PTY session name ${JSON.stringify(name)} is already in use by this agent`),
  duplicateBackend: (type: string) => new TerminalError('DUPLICATE_BACKEND', `PTY backend ${JSON.stringify(type)} is already registered`),
  disposing: () => new TerminalError('SERVICE_DISPOSING', 'PTY service is disposing'),
  invalid: (message: string) => new TerminalError('INVALID_REQUEST', message),
  sessionLimit: (owner: Agent, limit: number) =>
    new TerminalError(
      'SESSION_LIMIT',
      `PTY session limit reached: agent ${owner.id} already holds ${limit} sessions, the most one agent may hold ` +
        '(open, starting and closing ones count). Close a session you no longer need with terminal_close ' +
        '(terminal_list shows them), then open again',
    ),
  textTooLarge: (bytes: number, limit: number) =>
    new TerminalError(
      'TEXT_TOO_LARGE',
      `PTY send text is ${bytes} UTF-8 bytes, over the limit of ${limit} bytes per send; nothing was sent. ` +
        'Write large content to a file in pieces (several sends, each appending one part under the limit, e.g. a heredoc ' +
        'appended with >> file), then use the file',
    ),
  humanActive: (id: string, waitMs: number, client: string) =>
    new TerminalError(
      'HUMAN_ACTIVE',
      `a person is typing in PTY session ${id} from ${client}; your send was not written. ` +
        `Wait about ${Math.max(1, Math.ceil(waitMs / 1000))} s and send again, or read the session first (terminal_read): ` +
        'what they typed and what it printed is there',
    ),
  writerTaken: (id: string, writer: { client: string; typing: boolean }) =>
    new TerminalError(
      'HUMAN_WRITER_TAKEN',
      (writer.typing
        ? `another person is typing in PTY session ${id} from ${writer.client}`
        : `another person took over PTY session ${id} from ${writer.client} (not typing right now)`) +
        '; one person types at a time: watch read-only until they release the keyboard or leave',
    ),
  detached: (id: string) =>
    new TerminalError(
      'NO_SESSION',
      `PTY session ${id} is detached (the agent that opened it disconnected); adopt it first with terminal_open {"type": "shell", "resume": "${id}"}`,
    ),
  notDetached: (id: string, yours: boolean) =>
    new TerminalError(
      'NO_SESSION',
      yours
        ? `PTY session ${id} is not detached: it is already yours, send to it as it is`
        : `no detached PTY session ${id}; terminal_list shows the sessions you can resume (marked detached)`,
    ),
  adopted: (id: string) =>
    new TerminalError('SESSION_ADOPTED', `PTY session ${id} was resumed by another agent first; open a new session instead (terminal_open)`),
  hostLost: (id: string) =>
    new TerminalError(
      'SESSION_HOST_LOST',
      `the session host that held PTY session ${id} died; every process of the session is gone (its shell, jobs and REPLs) ` +
        'and nothing of it can be resumed. Open a new session with terminal_open (a fresh session host starts) and run again what it needs',
    ),
  notWatchable: (id: string) => new TerminalError('NOT_WATCHABLE', `PTY session ${id} cannot be watched: its backend keeps no screen to attach to`),
}

/** One failure as itself, several as an AggregateError: callers see the simplest faithful report. */
export function combineFailures(failures: unknown[], message: string): unknown {
  if (failures.length === 1) return failures[0]
  return new AggregateError(failures, `${message}: ${failures.map(errorMessage).join('; ')}`)
}
