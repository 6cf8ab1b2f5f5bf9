import { describeError } from '../attach/host-client'
import type { Composition } from '../compose/load-config'
import { startWebView } from '../web/server'
import { HumanGateway } from './gateway'
import { HumanSocketServer } from './socket-server'

/** What a host holds while people can attach to its sessions. */
export interface HumanAccess {
  /** Stop accepting people (socket and web view) and remove the socket and token; call before disposing the composition. */
  close(): Promise<void>
}

/** Options of {@link startHumanAccess}. */
export interface HumanAccessOptions {
  /** `--web [port]`: also serve the browser view on this port (0 = a free one). */
  web?: number
}

/**
 * Open the attach socket of a host (and the web view when asked). Watching is an extra, so a host
 * whose runtime directory is unsafe, or whose web port is taken, still serves its agents: the reason
 * goes to stderr with its code and that door stays shut.
 */
export async function startHumanAccess(composition: Composition, command: string, options: HumanAccessOptions = {}): Promise<HumanAccess> {
  const gateway = new HumanGateway(composition.root)
  const say = (line: string) => process.stderr.write(`dsh-terminal ${command}: ${line}\n`)
  const closers: (() => Promise<void>)[] = []
  try {
    const server = await HumanSocketServer.start({ gateway, configPath: composition.configPath })
    closers.push(() => server.close())
  } catch (error) {
    say(`\`dsh-terminal attach\` is unavailable: ${describeError(error)}`)
  }
  if (options.web !== undefined) {
    try {
      const view = await startWebView(gateway, { port: options.web, log: say })
      say(`web view of the sessions: ${view.url}`)
      closers.push(() => view.close())
    } catch (error) {
      say(`the web view did not start: ${describeError(error)}`)
    }
  }
  return {
    close: async () => {
      for (const close of [...closers].reverse()) await close().catch((error: unknown) => say(`closing failed: ${describeError(error)}`))
    },
  }
}
