#!/usr/bin/env node
import { parseArgs } from 'node:util'
import { errorMessage } from 'dsh-basics'
import { sessionHostCommand } from './command'
import { DEFAULT_IDLE_EXIT_MS, DEFAULT_MAX_TERMINALS, DEFAULT_WINDOW_BYTES } from './defaults'
import { relayToSocket } from './relay'
import { defaultSocketPath } from './runtime-dir'
import { SessionHost, SessionHostRunningError } from './server/session-host'

// `dsh-session-host [--stdio] [--socket PATH] [--idle-exit-ms N] [--window-bytes N] [--max-terminals N]`.
// Logs go to stderr only: in --stdio mode stdout carries the protocol.
const log = (message: string) => process.stderr.write(`dsh-session-host[${process.pid}]: ${message}\n`)

const USAGE = `usage: dsh-session-host [--stdio] [--socket PATH] [--idle-exit-ms N] [--window-bytes N] [--max-terminals N] [--start-timeout-ms N]
  (no --stdio) serve the per-user socket; --stdio: one client on stdin/stdout, relayed to that socket
  session host (started on first use); see dsh-session-host's README and PROTOCOL.md`

/** The command line, or usage on stderr and exit 2 for an option it does not know (0 for --help). */
function commandLine() {
  try {
    const { values } = parseArgs({
      options: {
        help: { type: 'boolean', short: 'h', default: false },
        stdio: { type: 'boolean', default: false },
        socket: { type: 'string' },
        'idle-exit-ms': { type: 'string' },
        'window-bytes': { type: 'string' },
        'max-terminals': { type: 'string' },
        'start-timeout-ms': { type: 'string' },
      },
    })
    if (values.help) {
      process.stdout.write(`${USAGE}\n`)
      process.exit(0)
    }
    return values
  } catch (error) {
    log(errorMessage(error))
    process.stderr.write(`${USAGE}\n`)
    process.exit(2)
  }
}

const values = commandLine()

/** A non-negative integer option, or its default; a bad value ends the process with a usage error. */
function integer(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (!Number.isSafeInteger(value) || value < 0) {
    log(`--${name} must be a non-negative integer, got ${JSON.stringify(raw)}`)
    process.exit(2)
  }
  return value
}

const idleExitMs = integer('idle-exit-ms', values['idle-exit-ms'], DEFAULT_IDLE_EXIT_MS)
const windowBytes = Math.max(1, integer('window-bytes', values['window-bytes'], DEFAULT_WINDOW_BYTES))
const maxTerminals = integer('max-terminals', values['max-terminals'], DEFAULT_MAX_TERMINALS)
const path = values.socket ?? defaultSocketPath()

if (values.stdio) {
  // A relay to the socket session host, started on first use with this relay's options.
  const extraArgs = ['--window-bytes', String(windowBytes), '--max-terminals', String(maxTerminals)]
  const startTimeoutMs = integer('start-timeout-ms', values['start-timeout-ms'], 15_000)
  try {
    await relayToSocket(
      { socketPath: path, command: sessionHostCommand(), idleExitMs, startTimeoutMs, extraArgs },
      { input: () => process.stdin, output: () => process.stdout },
    )
    process.exit(0)
  } catch (error) {
    log(`cannot relay to the session host on ${path}: ${errorMessage(error)}`)
    process.exit(1)
  }
} else {
  let host: SessionHost | undefined
  const stop = async (code: number) => {
    await host?.close().catch((error: unknown) => log(`close failed: ${errorMessage(error)}`))
    process.exit(code)
  }
  try {
    host = await SessionHost.start({ windowBytes, idleExitMs, maxTerminals, log, onIdle: () => void stop(0) })
    await host.listen(path)
    log(`listening on ${path}`)
  } catch (error) {
    if (error instanceof SessionHostRunningError) {
      log(error.message)
      await stop(0)
    }
    log(`cannot start: ${errorMessage(error)}`)
    await stop(1)
  }
  process.on('SIGTERM', () => void stop(0))
  process.on('SIGINT', () => void stop(0))
  process.on('SIGHUP', () => void stop(0))
}
