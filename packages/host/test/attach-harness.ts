import { execFileSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Agent } from 'dsh-agent'
import { eventually } from 'dsh-testkit'
import type { ToolResult } from 'dsh-tools'
import type { Composition } from '../src/compose/load-config'
import { HumanGateway } from '../src/human/gateway'
import type { ClientMessage, ServerMessage } from '../src/human/protocol'
import { HumanSocketServer, type HumanSocketServerOptions } from '../src/human/socket-server'
import { CLI_ARGS, DANGER_CONFIG, load, TSX } from './helpers'
import { PrivateRuntime } from './private-runtime'

/** A host composition in this process with one agent, its attach socket in a private `/tmp/dsh-terminal`. */
export interface TestHost {
  composition: Composition
  agent: Agent
  server: HumanSocketServer
  /** The mount namespace whose `/tmp/dsh-terminal` the server uses: run clients through `runtime.wrap`. */
  runtime: PrivateRuntime
  /** This uid's directory in it, as a path from this process. */
  dir: string
  /** Run a tool as the agent; returns the text and the error code, if any. */
  call(tool: string, args?: Record<string, unknown>): Promise<{ text: string; code?: string; result: ToolResult }>
  close(): Promise<void>
}

/** Start a danger-full-access composition, an agent, and its attach socket. */
export async function startTestHost(options: Partial<HumanSocketServerOptions> = {}): Promise<TestHost> {
  const runtime = await PrivateRuntime.start()
  const dir = runtime.dir
  const composition = await load(DANGER_CONFIG)
  const agent = await composition.agents.create()
  const server = await HumanSocketServer.start({ gateway: new HumanGateway(composition.root), configPath: DANGER_CONFIG, dir, ...options })
  let calls = 0
  return {
    composition,
    agent,
    server,
    runtime,
    dir,
    async call(tool, args = {}) {
      const result = await composition.tools.execute({ callId: `attach-test-${++calls}`, name: tool, arguments: args, agent })
      const text = result.content.map((part) => ('text' in part ? part.text : '')).join('')
      const code = (result.meta?.errorCode as string | undefined) ?? result.error?.code
      return { text, ...(code ? { code } : {}), result }
    },
    async close() {
      await server.close()
      await agent.dispose().catch(() => {})
      await composition.dispose()
      await runtime.close()
    },
  }
}

/** A raw protocol client: send lines, wait for the message that satisfies a test. */
export class RawClient {
  /** Every message received, in order. */
  readonly messages: ServerMessage[] = []
  /** True once the host hung up. */
  closed = false
  #buffer = ''

  private constructor(readonly socket: Socket) {
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      this.#buffer += chunk
      let newline = this.#buffer.indexOf('\n')
      while (newline !== -1) {
        this.messages.push(JSON.parse(this.#buffer.slice(0, newline)) as ServerMessage)
        this.#buffer = this.#buffer.slice(newline + 1)
        newline = this.#buffer.indexOf('\n')
      }
    })
    socket.on('error', () => {})
    socket.on('close', () => (this.closed = true))
  }

  /** Connect to `socketPath`. */
  static async connect(socketPath: string): Promise<RawClient> {
    const socket = connect(socketPath)
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve)
      socket.once('error', reject)
    })
    return new RawClient(socket)
  }

  /** Send a message (or a raw string as is). */
  send(message: ClientMessage | string): void {
    this.socket.write(typeof message === 'string' ? message : `${JSON.stringify(message)}\n`)
  }

  /** The first message (from `from` on) that satisfies `test`. */
  async next<T extends ServerMessage>(what: string, test: (message: ServerMessage) => message is T, from = 0): Promise<T> {
    return await eventually(() => this.messages.slice(from).find(test), what)
  }

  /** The first message of `type`. */
  async nextOfType<K extends ServerMessage['type']>(type: K, from = 0): Promise<Extract<ServerMessage, { type: K }>> {
    return await this.next(type, (message): message is Extract<ServerMessage, { type: K }> => message.type === type, from)
  }

  /** Everything `output` messages carried so far, decoded. */
  output(): string {
    return this.messages
      .filter((message): message is Extract<ServerMessage, { type: 'output' }> => message.type === 'output')
      .map((message) => Buffer.from(message.data, 'base64').toString('utf8'))
      .join('')
  }

  /** Hang up abruptly, as a killed client would. */
  destroy(): void {
    this.socket.destroy()
  }
}

/** The argv that runs `dsh-terminal attach …` from sources; inside `runtime` when given, to find its hosts. */
export function attachCommand(args: readonly string[], runtime?: PrivateRuntime): string[] {
  const argv = [TSX, ...CLI_ARGS, 'attach', ...args]
  return runtime ? runtime.wrap(argv) : argv
}

/** Quote one argument for a shell command line. */
export function shellQuote(arg: string): string {
  return `'${arg.replaceAll("'", `'\\''`)}'`
}

/** A tmux server of our own (its own socket name) with one 120×40 window running a command. */
export class TmuxPane {
  private constructor(private readonly socketPath: string) {}

  /** Run `argv` in a fresh pane with `env`; when it exits the pane shows `[exit <code>]` and stays. */
  static start(argv: readonly string[], env: Record<string, string>): TmuxPane {
    const socketPath = join(tmpdir(), `dsh-attach-tmux-${process.pid}-${Math.random().toString(36).slice(2)}`)
    const exports = Object.entries(env).map(([name, value]) => `export ${name}=${shellQuote(value)};`)
    const script = `${exports.join(' ')} ${argv.map(shellQuote).join(' ')}; echo "[exit $?]"; exec cat`
    execFileSync('tmux', ['-S', socketPath, '-f', '/dev/null', 'new-session', '-d', '-x', '120', '-y', '40', '-s', 'main', 'sh', '-c', script])
    return new TmuxPane(socketPath)
  }

  /** Type keys as tmux names them (`Enter`, `C-]`) or literal text with `literal`. */
  keys(keys: string, literal = false): void {
    execFileSync('tmux', ['-S', this.socketPath, 'send-keys', '-t', 'main', ...(literal ? ['-l'] : []), keys])
  }

  /** The visible pane text. */
  capture(): string {
    return execFileSync('tmux', ['-S', this.socketPath, 'capture-pane', '-p', '-t', 'main'], { encoding: 'utf8' })
  }

  /** Wait until the pane shows `text`; returns the pane. */
  async waitFor(text: string | RegExp, timeoutMs?: number): Promise<string> {
    return await eventually(
      () => {
        const pane = this.capture()
        return (typeof text === 'string' ? pane.includes(text) : text.test(pane)) && pane
      },
      `the tmux pane to show ${String(text)}`,
      timeoutMs,
    )
  }

  /** Kill the tmux server and everything in it, and remove its socket (tmux leaves it behind). */
  kill(): void {
    try {
      execFileSync('tmux', ['-S', this.socketPath, 'kill-server'], { stdio: 'ignore' })
    } catch {
      // Already gone.
    }
    rmSync(this.socketPath, { force: true })
  }
}
