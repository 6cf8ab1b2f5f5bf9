import type { Context } from '@deepseek-ai/cordis'
import type { z } from 'zod'
import { Config } from './config'
import { TerminalSessionService } from './service'

export type { TerminalBackend, TerminalBackendSession, TerminalBackendTap, TerminalDetachedSession, TerminalUnreachableTarget } from './backend'
export { Config, DEFAULT_MAX_SESSIONS_PER_AGENT, DEFAULT_MAX_TEXT_BYTES, type TerminalConfig } from './config'
export { MAX_SESSION_NAME_CODE_POINTS } from './names'
export {
  TERMINAL_ERROR_CODES,
  TerminalBackendCleanupError,
  TerminalError,
  type TerminalErrorCode,
} from './errors'
export { TerminalSessionService } from './service'
export {
  DEFAULT_HUMAN_ACTIVE_MS,
  DEFAULT_HUMAN_CLIENT,
  MAX_HUMAN_CLIENT_LENGTH,
  type TerminalHumanObserver,
  type TerminalHumanPresence,
  type TerminalHumanSummary,
  type TerminalHumanView,
  type TerminalHumanViewOptions,
} from './human'
export {
  TERMINAL_INPUT_KINDS,
  type TerminalInputKind,
  type TerminalInputState,
  type TerminalOutputMatch,
  type TerminalProgram,
} from './input-state'
export { keyNameProblem, MAX_TERMINAL_KEYS, TERMINAL_KEY_NAMES, type TerminalKeyName } from './keys'
export { MAX_TERMINAL_COLS, MAX_TERMINAL_ROWS, TERMINAL_READ_VIEWS, type TerminalReadView, type TerminalScreen, type TerminalSize } from './screen'
export { ROLLBACK_FAILED_MESSAGE, ROLLBACK_REASON } from './spawn'
export type { TerminalSendStart, TerminalSessionListener, TerminalSessionObserver, TerminalSessionPublished, TerminalSessionStart } from './session-observers'
export { DETACHED_EXPIRED_REASON } from './detached'
export { OWNER_DISPOSED_REASON, SERVICE_DISPOSED_REASON } from './registry-disposal'
export {
  asTerminalSessionId,
  isTerminalSignal,
  TERMINAL_SIGNALS,
  TERMINAL_WAIT_REASONS,
  type TerminalBackendSpawnSpec,
  type TerminalReadRequest,
  type TerminalReadResult,
  type TerminalSendHandle,
  type TerminalSendOperation,
  type TerminalSendRead,
  type TerminalEarlierOutput,
  type TerminalKeysSend,
  type TerminalResizeSend,
  type TerminalSendRequest,
  type TerminalTextSend,
  type TerminalSendResult,
  type TerminalSessionId,
  type TerminalSessionSnapshot,
  type TerminalSessionStatus,
  type TerminalSignal,
  type TerminalSignalResult,
  type TerminalSpawnRequest,
  type TerminalSpawnResult,
  type TerminalWaitReason,
} from './types'

/** Plugin name used in a cordis.yml. */
export const name = 'dsh-terminal'

/** Sessions are owned by exact agents, so the registry needs `ctx.agents`. */
export const inject = ['agents']

/** Provide `ctx.terminals` with the configured per-agent bounds. */
export function apply(ctx: Context, config: z.input<typeof Config>): void {
  ctx.plugin(TerminalSessionService, Config.parse(config))
}
