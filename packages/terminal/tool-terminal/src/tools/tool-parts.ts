import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from 'dsh-agent'
import { asTerminalSessionId, type TerminalInputState, type TerminalSessionId } from 'dsh-terminal'
import type { OutputShape, ToolContent, ToolOutput } from 'dsh-tools'
import { z } from 'zod'
import type { BackgroundHolders } from '../background-holders'
import { MIN_RESULT_BYTES, type TerminalToolsConfig } from '../config'
import { boundContent, fitResult, type ResultLayout, type ShapingOptions } from '../render/result-fit'
import { withTimeout } from 'dsh-basics'

/** What every tool factory needs: the plugin context, the session service, the config and shared state. */
export interface ToolDeps {
  ctx: Context
  /**
   * `ctx.terminals`, resolved once when the plugin applies: the plugin injects it, so it is reloaded
   * whenever the service changes, and a call no longer pays for resolving the service (a few µs each).
   */
  terminals: Context['terminals']
  config: TerminalToolsConfig
  /** Which background job holds which session (one per plugin instance). */
  holders: BackgroundHolders
}

/** The `sessionId` parameter shared by five tools: a non-empty id issued by terminal_open. */
export const sessionIdParam = z
  .string()
  .min(1, 'sessionId must be a non-empty session id such as "pty-1" (terminal_list shows yours)')
  .describe('Id returned by terminal_open, e.g. "pty-1" (not the display name). terminal_list shows your sessions.')

/** A tool argument as the branded id the registry looks up (it still answers NO_SESSION for a bad one). */
export function toSessionId(value: string): TerminalSessionId {
  return asTerminalSessionId(value)
}

/**
 * A fitted result: one text block within the cap, with `truncated` in the structured meta. Output
 * results (send, read) pass `shaping`: their bodies fold repeated lines, and the meta then says how
 * big the output was and what was left out (`output`, and `earlierOutput` when there was some).
 */
export function fittedOutput(layout: ResultLayout, maxBytes: number, meta: Record<string, unknown>, shaping?: ShapingOptions): ToolOutput {
  const fitted = fitResult(layout, maxBytes, shaping)
  const sizes: Record<string, unknown> = {}
  if (shaping) {
    sizes.output = outputMeta(fitted.output)
    if (fitted.earlier) sizes.earlierOutput = outputMeta(fitted.earlier)
  }
  return { content: [{ type: 'text', text: fitted.text }], meta: { ...meta, ...sizes, truncated: fitted.truncated } }
}

/** The size of one shaped output for `meta`: bytes and lines in total, shown, folded and left out. */
export interface OutputSizeMeta {
  bytes: number
  lines: number
  shownBytes: number
  foldedLines: number
  omittedLines: number
  omittedBytes: number
  /** The left-out lines by absolute scrollback number, when they are numbered (terminal_read `fromLine`/`count`). */
  omitted?: { fromLine: number; count: number }
}

function outputMeta(shape: OutputShape): OutputSizeMeta {
  const { bytes, lines, shownBytes, foldedLines, omittedLines, omittedBytes, omitted } = shape
  const sizes: OutputSizeMeta = { bytes, lines, shownBytes, foldedLines, omittedLines, omittedBytes }
  if (omitted) sizes.omitted = { ...omitted }
  return sizes
}

/**
 * The `maxBytes` parameter of an output tool: from {@link MIN_RESULT_BYTES} to the configured
 * `maxResultBytes`; without it the result gets `defaultMaxBytes`.
 */
export function maxBytesParam(config: Pick<TerminalToolsConfig, 'maxResultBytes' | 'defaultMaxBytes'>) {
  return z
    .number()
    .int('maxBytes must be an integer number of bytes')
    .min(MIN_RESULT_BYTES, `maxBytes must be at least ${MIN_RESULT_BYTES} bytes`)
    .max(config.maxResultBytes, `maxBytes must be at most ${config.maxResultBytes} bytes (maxResultBytes)`)
    .optional()
    .describe(
      `UTF-8 bytes this result may take (${MIN_RESULT_BYTES} to ${config.maxResultBytes}; default ${config.defaultMaxBytes}). ` +
        'Longer output keeps its head and tail; the line between them says what was left out and which terminal_read call returns what is still kept.',
    )
}

/** The `finalizeContent` of every terminal tool: the last-mile cap on whatever reaches the model. */
export function finalizeWith(config: TerminalToolsConfig): (content: ToolContent[]) => ToolContent[] {
  return (content) => boundContent(content, config.maxResultBytes)
}

/**
 * How long a read or list waits for one session's input state. The state is a courtesy line: a
 * backend slow to inspect its terminal must not hold the page or the list up.
 */
export const INPUT_STATE_WAIT_MS = 2000

/**
 * A fresh look at what `sessionId` waits for, or `undefined` when the backend cannot tell, fails
 * (the failure is the line's absence, never the call's), or takes longer than `waitMs`.
 */
export async function inputStateOf(
  ctx: Context,
  owner: Agent,
  sessionId: TerminalSessionId,
  waitMs = INPUT_STATE_WAIT_MS,
): Promise<TerminalInputState | undefined> {
  const looked = Promise.resolve()
    .then(() => ctx.terminals.inputState(owner, sessionId))
    .catch(() => undefined)
  return withTimeout(looked, waitMs, () => undefined)
}
