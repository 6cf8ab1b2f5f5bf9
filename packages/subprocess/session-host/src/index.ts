export { FrameChannel, type FrameChannelHandlers } from './protocol/channel'
export { ProtocolError, type ProtocolErrorCode } from './protocol/errors'
export { encodeControl, encodeOutput, type Frame, FrameDecoder, MAX_FRAME_BYTES, PROTOCOL_VERSION } from './protocol/frames'
export type {
  AckMessage,
  AdoptResult,
  ListResult,
  CancelMessage,
  ControlMessage,
  ErrorMessage,
  ExitMessage,
  HelloMessage,
  PeerRole,
  ReplyMessage,
  RequestMessage,
  RequestMethod,
  RequestParams,
  SpawnParams,
  SpawnResult,
  WireError,
} from './protocol/messages'
export { INPUT_FRAMES_FEATURE, INPUT_OFFSETS_FEATURE, isPositiveInteger } from './protocol/messages'
export { describePeerValue } from './protocol/peer-value'
export { sessionHostCommand } from './command'
export { connectLocalSessionHost } from './local-start'
export { defaultSocketPath, SessionHostDirError } from './runtime-dir'
