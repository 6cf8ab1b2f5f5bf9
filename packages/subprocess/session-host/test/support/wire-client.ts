import { connect } from 'node:net'
import type { Readable, Writable } from 'node:stream'
import { FrameChannel, type HelloMessage, type ReplyMessage, type RequestMethod, type RequestParams } from '../../src/index'

/** What a test sees of one terminal: its output in order (offsets checked) and its exit. */
export interface SeenTerminal {
  chunks: Buffer[]
  /** Bytes received. */
  bytes: number
  /** Offset of the first byte received (an adoption's `replayFrom`; 0 for a spawn). */
  start: number
  /** Offset one past the last byte received. */
  end: number
  text: () => string
  exit?: { exitCode: number | null; signal: string | null }
  gaps: number
}

/** A hand-driven protocol client for tests: raw requests, output and errors as plain values. */
export interface WireClient {
  readonly channel: FrameChannel
  readonly hello: Promise<HelloMessage>
  readonly errors: { code: string; message: string }[]
  readonly terminals: Map<number, SeenTerminal>
  /** Every reply received, also to requests sent by hand through `channel`. */
  readonly replies: ReplyMessage[]
  /** What arrived, in order: `reply:<id>`, `output:<terminal>`, `exit:<terminal>`. */
  readonly events: string[]
  /** Control messages other than replies and exits (pongs, an input frame's failure, …). */
  readonly others: { type: string; [field: string]: unknown }[]
  readonly closed: Promise<void>
  /** Send a request and resolve its reply (ok or not). */
  call<M extends RequestMethod>(method: M, params: RequestParams[M]): Promise<ReplyMessage>
  /** Send a request and resolve its result; throws an Error carrying the reply's code otherwise. */
  ok<M extends RequestMethod>(method: M, params: RequestParams[M]): Promise<unknown>
  /** Acknowledge everything received of `terminal`. */
  ackAll(terminal: number): void
  close(): void
}

/** A client over `input`/`output`; with `autoAck` it acknowledges every output frame at once. */
export function wireClient(input: Readable, output: Writable, options: { autoAck?: boolean } = {}): WireClient {
  const autoAck = options.autoAck ?? true
  const pending = new Map<number, (reply: ReplyMessage) => void>()
  const errors: { code: string; message: string }[] = []
  const terminals = new Map<number, SeenTerminal>()
  const replies: ReplyMessage[] = []
  const events: string[] = []
  const others: { type: string; [field: string]: unknown }[] = []
  let nextId = 1
  let helloResolve!: (hello: HelloMessage) => void
  const hello = new Promise<HelloMessage>((resolve) => (helloResolve = resolve))
  let closedResolve!: () => void
  const closed = new Promise<void>((resolve) => (closedResolve = resolve))
  const seen = (id: number): SeenTerminal => {
    let terminal = terminals.get(id)
    if (!terminal) {
      const fresh: SeenTerminal = { chunks: [], bytes: 0, start: 0, end: 0, gaps: 0, text: () => Buffer.concat(fresh.chunks).toString('utf8') }
      terminal = fresh
      terminals.set(id, terminal)
    }
    return terminal
  }
  const channel: FrameChannel = new FrameChannel(
    input,
    output,
    'client',
    {},
    {
      hello: (message) => helloResolve(message),
      control: (message) => {
        if (message.type === 'reply') {
          const reply = message as unknown as ReplyMessage
          replies.push(reply)
          events.push(`reply:${reply.id}`)
          pending.get(reply.id)?.(reply)
          pending.delete(reply.id)
        } else if (message.type === 'exit') {
          events.push(`exit:${message.terminal}`)
          seen(message.terminal as number).exit = message.exit as SeenTerminal['exit']
        } else others.push(message)
      },
      output: (terminal, offset, bytes) => {
        events.push(`output:${terminal}`)
        const target = seen(terminal)
        if (target.bytes === 0) target.start = target.end = offset
        if (offset !== target.end) target.gaps += 1
        target.chunks.push(bytes)
        target.bytes += bytes.length
        target.end = offset + bytes.length
        if (autoAck) channel.send({ type: 'ack', terminal, offset: target.end })
      },
      protocolError: (error) => errors.push({ code: error.code, message: error.message }),
      peerError: (code, message) => errors.push({ code, message }),
      inputFailed: (terminal, code, message) => others.push({ type: 'error', terminal, code, message }),
      closed: () => closedResolve(),
    },
  )
  const call = <M extends RequestMethod>(method: M, params: RequestParams[M]) =>
    new Promise<ReplyMessage>((resolve) => {
      const id = nextId++
      pending.set(id, resolve)
      channel.send({ type: 'request', id, method, params })
    })
  return {
    channel,
    hello,
    errors,
    terminals,
    replies,
    events,
    others,
    closed,
    call,
    ok: async (method, params) => {
      const reply = await call(method, params)
      if (reply.ok) return reply.result
      throw Object.assign(new Error(reply.error.message), { code: reply.error.code })
    },
    ackAll: (terminal) => channel.send({ type: 'ack', terminal, offset: seen(terminal).end }),
    close: () => channel.close(),
  }
}

/** A wire client over a fresh connection to `socketPath`. */
export async function socketClient(socketPath: string, options: { autoAck?: boolean } = {}): Promise<WireClient> {
  const socket = connect(socketPath)
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  const client = wireClient(socket, socket, options)
  await client.hello
  return client
}

/** The environment a test spawn sends: this process's PATH and a plain TERM, nothing else. */
export function testEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', TERM: 'dumb', HOME: process.env.HOME ?? '/', ...extra }
}

/** Params of a bash spawn without rc files. */
export function bashSpawn(extra: Partial<RequestParams['spawn']> = {}): RequestParams['spawn'] {
  return { argv: ['bash', '--noprofile', '--norc', '-i'], cwd: '/', env: testEnv({ PS1: '$ ' }), rows: 24, cols: 80, graceMs: 1000, ...extra }
}
