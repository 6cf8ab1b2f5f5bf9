import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from 'dsh-agent'
import { errorMessage, withTimeout } from 'dsh-basics'
import type { ToolCallEvent } from 'dsh-tools'
import { z } from 'zod'
import { HUMAN_EVENT } from '../human/events'
import { HOST_VERSION } from '../version'
import { AuditFile, resolveAuditPath } from './audit-file'
import { humanRecord, toolCallRecord } from './records'
import { DEFAULT_MAX_ARGUMENT_BYTES, type TypedInputVerdict, typedSession } from './redact'

/** Plugin name used in a cordis.yml (a host builtin). */
export const name = 'dsh-terminal-mcp/audit'

/** The log watches the tool pipeline; it asks `ctx.terminals` (when mounted) what a terminal waits for. */
export const inject = ['tools']

/** How long the look at a terminal before a send may take; past it the send's text is not logged. */
const INPUT_LOOK_MS = 1000

/** Where the log goes and how much of an argument it keeps. */
export const Config = z
  .object({
    file: z
      .string()
      .optional()
      .describe('The log file; `~/` is your home, a relative path the directory the host runs in. Default: $XDG_STATE_HOME/dsh-terminal/audit/audit.jsonl'),
    maxArgumentBytes: z
      .number()
      .int()
      .min(64)
      .max(65_536)
      .default(DEFAULT_MAX_ARGUMENT_BYTES)
      .describe('UTF-8 bytes kept of one string argument; a longer one is cut and its full size noted'),
  })
  .prefault({})

/**
 * Append one JSON line per tool call and per thing a person did with a session to a hash-chained log
 * (see `chain.ts`), from start to unload. A log that cannot be opened safely stops the composition.
 */
export function apply(ctx: Context, input: z.input<typeof Config>): void {
  const config = Config.parse(input)
  const file = AuditFile.open(resolveAuditPath(config.file))
  const logger = ctx.logger('audit')
  let failed = false
  const write = (record: Record<string, unknown>): void => {
    try {
      file.append(record)
      failed = false
    } catch (error) {
      // Said once per run of failures, not once per call.
      if (!failed) logger.error(`cannot append to the audit log ${file.path}: ${errorMessage(error)}`)
      failed = true
    }
  }
  write({ time: new Date().toISOString(), event: 'audit_start', pid: process.pid, version: HOST_VERSION })

  const verdicts = new WeakMap<ToolCallEvent, TypedInputVerdict>()
  ctx.tools.observe({
    beforeCall: async (call) => {
      const sessionId = typedSession(call.name, call.arguments)
      if (sessionId !== undefined) verdicts.set(call, await typedInputVerdict(ctx, call.agent, sessionId))
    },
    afterCall: (call, result, durationMs) => write(toolCallRecord(call, result, durationMs, config.maxArgumentBytes, verdicts.get(call))),
  })
  ctx.on(HUMAN_EVENT, (event) => write(humanRecord(event)))
  ctx.effect(
    () => () => {
      write({ time: new Date().toISOString(), event: 'audit_stop', pid: process.pid })
      file.close()
    },
    'audit log',
  )
}

/** What the terminal waits for right before a call types into it: `secret` at a password prompt, `unknown` when it cannot tell. */
async function typedInputVerdict(ctx: Context, agent: Agent | undefined, sessionId: string): Promise<TypedInputVerdict> {
  const terminals = ctx.get('terminals') as Context['terminals'] | undefined
  if (!terminals || !agent) return 'unknown'
  const looked = Promise.resolve()
    .then(() => terminals.inputState(agent, sessionId as Parameters<typeof terminals.inputState>[1]))
    .catch(() => undefined)
  const input = await withTimeout(looked, INPUT_LOOK_MS, () => undefined)
  if (input === undefined) return 'unknown'
  return input.kind === 'password' ? 'secret' : 'clear'
}
