import type { Readable, Writable } from 'node:stream'
import { errorMessage } from 'dsh-basics'
import { SubprocessError, type SubprocessRuntime, validateTerminalFacts } from 'dsh-subprocess'
import { FrameChannel } from '../protocol/channel'
import { ProtocolError } from '../protocol/errors'
import { type AdoptResult, isPositiveInteger, type RequestMethod, type RequestParams, type WireError } from '../protocol/messages'
import { describePeerValue } from '../protocol/peer-value'
import { HostedTerminal } from './hosted-terminal'
import { adoptKeyOf, durableOf, paramsObject, spawnSpecOf, terminalOf, writeDataOf } from './requests'
import type { TerminalTable } from './terminal-table'

/** What a {@link ClientConnection} needs from its session host. */
export interface ClientConnectionOptions {
  /** Where terminals are spawned: the session host's `ctx.subprocess` (dsh-subprocess-local). */
  readonly subprocess: SubprocessRuntime
  /** Unacknowledged bytes per terminal before its PTY is paused. */
  readonly windowBytes: number
  /** Every terminal of the session host: the cap, durable keys, detached terminals and adoption. */
  readonly table: TerminalTable
  /** Diagnostics (stderr in the bin). */
  readonly log: (message: string) => void
  /** The connection ended and its terminals are gone. */
  readonly ended: (connection: ClientConnection) => void
}

/**
 * Replies and errors a client may leave unread beyond its terminals' windows (output is bounded by
 * them): past it the client keeps asking without reading, and its connection is closed.
 */
const UNREAD_REPLY_BYTES = 16 * 1024 * 1024

const METHODS: readonly RequestMethod[] = [
  'spawn',
  'write',
  'resize',
  'inspectForeground',
  'signalForeground',
  'pinShellGroup',
  'terminate',
  'setFacts',
  'list',
  'adopt',
]

/** Refusals of one client that reach the log; later ones are only answered. */
export const LOGGED_REFUSALS = 20

/**
 * One client of a session host: its protocol channel, the terminals it spawned or adopted (and only
 * those: numbers are per connection) and its pending spawns. When it ends, its terminals are
 * terminated, except the durable ones, which are detached for a later adopter.
 */
export class ClientConnection {
  readonly #channel: FrameChannel
  readonly #options: ClientConnectionOptions
  readonly #terminals = new Map<number, HostedTerminal>()
  readonly #spawning = new Map<number, AbortController>()
  #nextTerminal = 1
  #refusals = 0
  #ended: Promise<void> | undefined

  constructor(input: Readable, output: Writable, options: ClientConnectionOptions) {
    this.#options = options
    this.#channel = new FrameChannel(
      input,
      output,
      'session-host',
      { pid: process.pid, windowBytes: options.windowBytes },
      {
        hello: () => {},
        control: (message) => this.#control(message),
        output: () => this.#refuse(new ProtocolError('UNEXPECTED_FRAME', 'output frames go from the session host to the client only')),
        input: (terminal, bytes) => this.#input(terminal, bytes),
        protocolError: (error) => this.#logRefusal(`client frame refused: ${error.code}: ${error.message}`),
        peerError: (code, message) => this.#logRefusal(`client reported ${code}: ${message}`),
        closed: () => void this.end(),
      },
    )
  }

  /**
   * Hang up: every terminal of this client is terminated, except durable ones, which are detached
   * (or terminated too when `terminateDurable`: the session host closes). Resolves once done.
   */
  end(terminateDurable = false): Promise<void> {
    this.#ended ??= (async () => {
      this.#channel.close()
      for (const controller of this.#spawning.values()) controller.abort()
      const ending: HostedTerminal[] = []
      for (const terminal of this.#terminals.values()) {
        if (terminal.durable && !terminateDurable) this.#options.table.detach(terminal)
        else ending.push(terminal)
      }
      this.#terminals.clear()
      await Promise.allSettled(ending.map((terminal) => this.#terminate(terminal)))
      this.#options.ended(this)
    })()
    return this.#ended
  }

  /** Terminate a terminal for good: its key and its place in the table are freed. */
  async #terminate(terminal: HostedTerminal): Promise<void> {
    await terminal.handle.terminate()
    this.#options.table.forget(terminal)
    terminal.slot()
  }

  #refuse(error: ProtocolError): void {
    this.#channel.send({ type: 'error', code: error.code, message: error.message })
    this.#logRefusal(`client frame refused: ${error.code}: ${error.message}`)
  }

  /** Log a refusal, the first {@link LOGGED_REFUSALS} of this client only: a client cannot fill the disk through the log. */
  #logRefusal(line: string): void {
    this.#refusals += 1
    if (this.#refusals <= LOGGED_REFUSALS) this.#options.log(line)
    if (this.#refusals === LOGGED_REFUSALS) this.#options.log(`client refused ${LOGGED_REFUSALS} times: its further refusals are answered, not logged`)
  }

  #control(message: { readonly type: string; readonly [field: string]: unknown }): void {
    // An adopter is sent a durable terminal's whole ring at once: it counts as its window here.
    let windows = this.#options.windowBytes
    for (const terminal of this.#terminals.values()) windows += Math.max(this.#options.windowBytes, terminal.durable?.retainBytes ?? 0)
    const unreadBound = windows + UNREAD_REPLY_BYTES
    if (this.#channel.bufferedBytes > unreadBound) {
      this.#refuse(
        new ProtocolError('NOT_READING', `the client left ${this.#channel.bufferedBytes} bytes unread while it kept sending; closing its connection`),
      )
      return void this.end()
    }
    switch (message.type) {
      case 'request':
        return this.#request(message)
      case 'ack':
        return this.#ack(message)
      case 'cancel':
        if (isPositiveInteger(message.id)) this.#spawning.get(message.id)?.abort()
        return
      case 'pong':
        // The session host never pings; a pong nobody asked for is harmless.
        return
      case 'reply':
      case 'exit':
        return this.#refuse(new ProtocolError('UNEXPECTED_FRAME', `a ${message.type} message goes from the session host to the client only`))
      default:
        return this.#refuse(new ProtocolError('UNKNOWN_FRAME', `unknown control message type ${describePeerValue(message.type)}`))
    }
  }

  /**
   * An input frame: written at once, in arrival order with the requests around it. It has no reply; a
   * write that fails (the terminal is unknown or exited) is told in an error frame naming the terminal.
   */
  #input(number: number, bytes: Buffer): void {
    const terminal = this.#terminals.get(number)
    if (!terminal) return this.#refuse(new ProtocolError('UNKNOWN_TERMINAL', `input for terminal ${number}, which this connection does not hold`))
    const failed = (error: unknown) => this.#channel.send({ type: 'error', terminal: number, ...wireError(error) })
    try {
      Promise.resolve(terminal.write(bytes)).catch(failed)
    } catch (error) {
      failed(error)
    }
  }

  #ack(message: { readonly [field: string]: unknown }): void {
    const terminal = isPositiveInteger(message.terminal) ? this.#terminals.get(message.terminal) : undefined
    if (!terminal)
      return this.#refuse(new ProtocolError('UNKNOWN_TERMINAL', `ack for terminal ${describePeerValue(message.terminal)}, which this connection does not hold`))
    const offset = message.offset
    if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0 || !terminal.acknowledge(offset)) {
      this.#refuse(
        new ProtocolError('INVALID_ACK', `ack of terminal ${describePeerValue(message.terminal)} at ${describePeerValue(offset)} is beyond what was sent`),
      )
    }
  }

  #request(message: { readonly [field: string]: unknown }): void {
    const { id, method, params } = message
    if (!isPositiveInteger(id)) return this.#refuse(new ProtocolError('MALFORMED_FRAME', 'a request needs a positive integer id'))
    if (typeof method !== 'string' || !(METHODS as readonly string[]).includes(method)) {
      return this.#fail(id, { code: 'UNKNOWN_METHOD', message: `unknown method ${describePeerValue(method)}; known: ${METHODS.join(', ')}` })
    }
    if (method === 'spawn') return this.#spawnRequest(id, params)
    if (method === 'adopt') return this.#adopt(id, params)
    // Called synchronously in arrival order: writes reach the PTY in the order they were sent.
    let result: unknown
    try {
      result = this.#call(method as Exclude<RequestMethod, 'spawn' | 'adopt'>, params)
    } catch (error) {
      return this.#fail(id, wireError(error))
    }
    Promise.resolve(result).then(
      (value) => this.#channel.send({ type: 'reply', id, ok: true, result: value ?? null }),
      (error: unknown) => this.#fail(id, wireError(error)),
    )
  }

  #fail(id: number, error: WireError): void {
    this.#channel.send({ type: 'reply', id, ok: false, error })
  }

  /** A spawn: its reply goes out before the terminal's first output frame. */
  #spawnRequest(id: number, params: unknown): void {
    this.#spawn(id, params).then(
      ({ terminal, number }) => {
        const { handle } = terminal
        this.#channel.send({ type: 'reply', id, ok: true, result: { terminal: number, pid: handle.pid, limits: handle.limits } })
        terminal.start(this.#channel, number)
      },
      (error: unknown) => this.#fail(id, wireError(error)),
    )
  }

  /** An adoption, decided synchronously (first come wins); the reply goes out before the replayed output. */
  #adopt(id: number, params: unknown): void {
    let terminal: HostedTerminal
    try {
      terminal = this.#options.table.adopt(adoptKeyOf(params))
    } catch (error) {
      return this.#fail(id, wireError(error))
    }
    const number = this.#nextTerminal++
    this.#terminals.set(number, terminal)
    const { handle } = terminal
    const result: AdoptResult = {
      terminal: number,
      pid: handle.pid,
      limits: handle.limits,
      facts: terminal.facts,
      replayFrom: terminal.replayFrom,
      inputOffset: terminal.inputOffset,
    }
    this.#channel.send({ type: 'reply', id, ok: true, result })
    terminal.adopt(this.#channel, number)
  }

  #call(method: Exclude<RequestMethod, 'spawn' | 'adopt'>, params: unknown): unknown {
    if (method === 'list') return { terminals: this.#options.table.list() }
    const [number, terminal] = this.#terminal(params)
    const { handle } = terminal
    const args = paramsObject(params)
    switch (method) {
      case 'write':
        return terminal.write(writeDataOf(args as unknown as RequestParams['write']))
      case 'resize':
        return handle.resize(args.rows as number, args.cols as number)
      case 'inspectForeground':
        return handle.inspectForeground((args.options as RequestParams['inspectForeground']['options']) ?? {})
      case 'signalForeground':
        return handle.signalForeground(args.signal as NodeJS.Signals)
      case 'pinShellGroup':
        return handle.pinShellGroup(args.processGroupId as number)
      case 'terminate':
        return this.#terminate(terminal).then(() => {
          if (this.#terminals.get(number) === terminal) this.#terminals.delete(number)
        })
      case 'setFacts': {
        if (!terminal.durable)
          throw new SubprocessError('INVALID_SPEC', `terminal ${number} is not durable: facts are kept only for a durable terminal's adopter`)
        validateTerminalFacts(args.facts as string)
        terminal.facts = args.facts as string
        return null
      }
    }
  }

  #terminal(params: unknown): [number, HostedTerminal] {
    const number = terminalOf(params)
    const terminal = this.#terminals.get(number)
    if (!terminal) throw new ProtocolError('UNKNOWN_TERMINAL', `terminal ${number} is not one this connection spawned or adopted (or it was terminated)`)
    return [number, terminal]
  }

  async #spawn(id: number, params: unknown): Promise<{ terminal: HostedTerminal; number: number }> {
    const controller = new AbortController()
    this.#spawning.set(id, controller)
    let slot: (() => void) | undefined
    try {
      const spec = spawnSpecOf(params, controller.signal)
      const durable = durableOf(params)
      slot = this.#options.table.admit(durable?.key)
      const handle = await this.#options.subprocess.spawnTerminal(spec)
      if (this.#ended) {
        await handle.terminate()
        throw new ProtocolError('UNKNOWN_TERMINAL', 'the connection ended before the spawn completed')
      }
      const terminal = new HostedTerminal(handle, this.#options.windowBytes, durable, slot)
      slot = undefined
      this.#options.table.register(terminal)
      const number = this.#nextTerminal++
      this.#terminals.set(number, terminal)
      return { terminal, number }
    } finally {
      slot?.()
      this.#spawning.delete(id)
    }
  }
}

/** A thrown value as a reply's error: its stable code when it has one. */
function wireError(error: unknown): WireError {
  const candidate = error as { code?: unknown; survivors?: unknown }
  const code = typeof candidate?.code === 'string' ? candidate.code : 'SESSION_HOST_ERROR'
  const survivors = Array.isArray(candidate?.survivors) ? { survivors: candidate.survivors as number[] } : {}
  return { code, message: errorMessage(error), ...survivors }
}
