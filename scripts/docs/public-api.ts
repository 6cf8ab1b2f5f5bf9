import type { PublicApiEntry } from './unused-exports'

/**
 * Names kept in a package's main entry although no package of this repository imports them: the
 * API documented for users outside it. Each row says why; `pnpm docs:check` fails on a row whose
 * name is gone, and on any other export nothing imports (scripts/docs/unused-exports.ts).
 */
export const PUBLIC_API: readonly PublicApiEntry[] = [
  {
    package: 'dsh-terminal-mcp',
    names: '*',
    why: 'the embedding API (packages/host/README.md, "API"): compositions, the MCP, HTTP and headless hosts, the ACP projection',
  },
  { package: 'dsh-basics', names: ['Utf8Cut'], why: 'the result type of keepUtf8Head and keepUtf8Tail, which callers store' },
  {
    package: 'dsh-sandbox',
    names: ['SandboxErrorCode', 'RuntimeParentErrorCode'],
    why: 'the codes a caller routes a sandbox or runtime-directory error on (its README, "Errors")',
  },
  {
    package: 'dsh-subprocess',
    names: ['SubprocessErrorCode', 'StdinWaitProof', 'ThreadState'],
    why: 'the contract a provider implements: its error codes and the unions ForegroundFacts and ThreadSample are made of',
  },
  {
    package: 'dsh-session-host',
    names: [
      'PROTOCOL_VERSION',
      'MAX_FRAME_BYTES',
      'ControlMessage',
      'AckMessage',
      'CancelMessage',
      'ErrorMessage',
      'ExitMessage',
      'RequestMessage',
      'SpawnParams',
      'SpawnResult',
      'PeerRole',
      'FrameChannelHandlers',
      'ProtocolError',
      'ProtocolErrorCode',
      'SessionHostDirError',
    ],
    why: 'the wire protocol (PROTOCOL.md) for a client written outside this repository: its version, frame bound, message types, channel hooks and the errors it routes on',
  },
  {
    package: 'dsh-terminal-recorder',
    names: ['AsciicastError', 'RecorderError', 'RecorderErrorCode', 'Asciicast', 'RecordedSend'],
    why: 'what a reader of recordings handles: the errors it routes on and the results of parseAsciicast and recordedSends',
  },
]
