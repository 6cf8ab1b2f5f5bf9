export { FrameChannel, type FrameChannelHandlers } from './protocol/channel'
export { FATAL_CODES, ProtocolError, type ProtocolErrorCode } from './protocol/errors'
export {
  CONTROL_FRAME,
  encodeControl,
  encodeOutput,
  type Frame,
  FrameDecoder,
  MAX_FRAME_BYTES,
  MAX_OUTPUT_PER_FRAME,
  OUTPUT_FRAME,
  PROTOCOL_VERSION,
} from './protocol/frames'
export {
  type AckMessage,
  type CancelMessage,
  type ControlMessage,
  type ErrorMessage,
  type ExitMessage,
  FEATURES,
  type HelloMessage,
  isPositiveInteger,
  type PeerRole,
  type ReplyMessage,
  type RequestMessage,
  type RequestMethod,
  type RequestParams,
  type SpawnParams,
  type SpawnResult,
  type WireError,
} from './protocol/messages'
export { sessionHostCommand } from './command'
export { DEFAULT_IDLE_EXIT_MS, DEFAULT_WINDOW_BYTES } from './defaults'
export { assertOwnSocket, assertPrivateDir, defaultSocketPath, ensureSocketDir, SessionHostDirError } from './runtime-dir'
