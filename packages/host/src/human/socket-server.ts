import { randomBytes } from 'node:crypto'
import { chmodSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import type { HumanGateway } from './gateway'
import type { HostInfo } from './protocol'
import { ensureRuntimeDir, type HostFiles, hostFiles, runtimeDirPath, sweepDeadHosts } from './runtime-dir'
import { SocketConnection, type SocketConnectionOptions } from './socket-connection'

/** Options of {@link HumanSocketServer.start}. */
export interface HumanSocketServerOptions {
  /** The door to the host's sessions. */
  gateway: HumanGateway
  /** The composition served, reported by `list`. */
  configPath?: string
  /** The runtime directory (default {@link runtimeDirPath}). */
  dir?: string
  /** The pid that names the files (default this process). */
  pid?: number
  /** Unread output bound per client before it is dropped. */
  maxUnreadBytes?: number
}

/**
 * A host's private attach socket: `<dir>/<pid>.sock` (0600) in a 0700 directory, plus `<pid>.token`
 * (0600), whose contents a client must send first. Node cannot read SO_PEERCRED, so the token is the
 * peer check: only this uid (or root) can read it. Files of dead hosts are swept on start.
 */
export class HumanSocketServer {
  readonly #connections = new Set<SocketConnection>()
  #closing: Promise<void> | undefined

  private constructor(
    private readonly server: Server,
    /** This host's socket and token paths. */
    readonly files: HostFiles,
    connectionOptions: SocketConnectionOptions,
    private readonly removeOnExit: () => void,
  ) {
    server.on('connection', (socket) => {
      const connection = new SocketConnection(socket, connectionOptions)
      this.#connections.add(connection)
      socket.on('close', () => this.#connections.delete(connection))
    })
  }

  /** Create the directory and token, sweep dead hosts' files, and listen; rejects with a coded error. */
  static async start(options: HumanSocketServerOptions): Promise<HumanSocketServer> {
    const dir = ensureRuntimeDir(options.dir ?? runtimeDirPath())
    sweepDeadHosts(dir)
    const pid = options.pid ?? process.pid
    const files = hostFiles(dir, pid)
    rmSync(files.socketPath, { force: true })
    rmSync(files.tokenPath, { force: true })
    const token = randomBytes(32).toString('hex')
    writeFileSync(files.tokenPath, `${token}\n`, { mode: 0o600, flag: 'wx' })
    const removeFiles = () => {
      rmSync(files.socketPath, { force: true })
      rmSync(files.tokenPath, { force: true })
    }
    const server = createServer()
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(files.socketPath, () => {
          server.off('error', reject)
          resolve()
        })
      })
      chmodSync(files.socketPath, 0o600)
    } catch (error) {
      server.close()
      removeFiles()
      throw error
    }
    // A host that exits without closing (an uncaught error) still removes its files.
    process.on('exit', removeFiles)
    const host: HostInfo = { pid, cwd: process.cwd(), ...(options.configPath ? { configPath: options.configPath } : {}) }
    const connectionOptions: SocketConnectionOptions = {
      gateway: options.gateway,
      token,
      host,
      ...(options.maxUnreadBytes !== undefined ? { maxUnreadBytes: options.maxUnreadBytes } : {}),
    }
    const instance = new HumanSocketServer(server, files, connectionOptions, () => process.off('exit', removeFiles))
    server.on('error', () => {}) // Accept errors after listening are per client; never crash the host.
    return instance
  }

  /** Stop listening, detach every client (releasing writers), and remove the socket and token; idempotent. */
  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      for (const connection of this.#connections) connection.close()
      this.#connections.clear()
      this.server.close(() => resolve())
    }).finally(() => {
      rmSync(this.files.socketPath, { force: true })
      rmSync(this.files.tokenPath, { force: true })
      this.removeOnExit()
    })
    return this.#closing
  }
}
