import { type Context, Logger, type Message } from '@deepseek-ai/cordis'

/** Where a host sends one formatted log line (never stdout: stdout carries the protocol). */
export type LogSink = (line: string) => void

/** Cordis' numeric level of `warn` (a const enum there): export errors, info and warnings, not debug. */
const WARN_LEVEL = 2

/** The default sink: standard error, one line per message. */
export const stderrSink: LogSink = (line) => {
  process.stderr.write(`${line}\n`)
}

/** What the exporter kept of a load, for the loud startup error. */
export interface LogCapture {
  /** Error and warning lines logged so far. */
  readonly problems: string[]
  /** Loader patch warnings: a patch that matched nothing silently changes nothing, so it fails startup. */
  readonly patchWarnings: string[]
}

/**
 * Export the context's log (Cordis buffers it until an exporter exists) to `sink` as
 * `[type] name message`, and collect errors, warnings and patch warnings for startup reporting.
 */
export function exportLog(root: Context, sink: LogSink): LogCapture {
  const capture: LogCapture = { problems: [], patchWarnings: [] }
  const exporter = {
    colors: 0 as const,
    // Cordis ranks warn (2) above info (1): the default threshold would drop every warning.
    levels: { default: WARN_LEVEL },
    export: (message: Message) => {
      const text = Logger.format(exporter, message)
      const line = `[${message.type}] ${message.name} ${text}`
      if (message.type === 'error' || message.type === 'warn') capture.problems.push(line)
      if (message.name === 'loader' && message.type === 'warn' && /^patch\b/.test(String(message.args[0]))) {
        capture.patchWarnings.push(text)
      }
      sink(line)
    },
  }
  root.logger.exporter(exporter)
  return capture
}
