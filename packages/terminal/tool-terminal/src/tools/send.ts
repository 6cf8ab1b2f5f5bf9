import type { Agent } from 'dsh-agent'
import {
  MAX_TERMINAL_KEYS,
  type TerminalKeysSend,
  type TerminalResizeSend,
  type TerminalSendHandle,
  type TerminalSendRequest,
  type TerminalSendResult,
  type TerminalSessionId,
  type TerminalTextSend,
} from 'dsh-terminal'
import { keepUtf8Head, LinePattern, raceAbort, settledWithin } from 'dsh-basics'
import { defineTool, regexSourceParam, type ToolOutput } from 'dsh-tools'
import { z } from 'zod'
import { startBackgroundSend, type JobStarter } from '../background'
import { explainBusy } from '../background-holders'
import type { TerminalToolsConfig } from '../config'
import { jobsUnavailable, sendCancelled } from '../errors'
import { KEY_NAMES_PHRASE, keysProblem } from '../keys'
import { backgroundText, inputMeta, screenMeta, sendLayout, sizeText } from '../render/texts'
import { finalizeWith, fittedOutput, maxBytesParam, sessionIdParam, toSessionId, type ToolDeps } from './tool-parts'
import { checkWindowSize, colsParam, rowsParam, windowSizeOf } from './window-size'

/** How long a cancelled foreground call waits for the backend to settle the interrupted send. */
export const CANCEL_GRACE_MS = 2000

/** Bytes of the sent text shown in a call's title. */
const TITLE_TEXT_BYTES = 80

/**
 * The `waitFor` parameter: a line pattern's source, refused (INVALID_ARGUMENTS) when it is no regular
 * expression; `execute` compiles it (UNSUPPORTED_PATTERN for backreferences and lookaround).
 */
const waitForParam = regexSourceParam('waitFor')
  .optional()
  .describe(
    'Regular expression (source only, no slashes), e.g. "ready|listening on"; "(?i)ready" ignores case. The call returns as soon as a line of new output matches ' +
      "([wait: output_match]), e.g. a dev server's ready line. Output then going quiet does not end the wait (give idleMs for that). " +
      'RE2 syntax: no backreferences (\\1) or lookaround ((?=…), (?<=…)).',
  )

/** A `…Ms` parameter: an integer from 1 to `max`; messages name the bound and where it comes from. */
function millisParam(key: string, max: number, bound: string) {
  return z
    .number()
    .int(`${key} must be an integer number of milliseconds`)
    .min(1, `${key} must be at least 1 ms`)
    .max(max, `${key} must be at most ${max} ms (${bound})`)
    .optional()
}

/** The options `sendParameters` reads. */
export type SendParameterOptions = Pick<
  TerminalToolsConfig,
  'enableRunInBackground' | 'maxTimeoutMs' | 'backgroundTimeoutMs' | 'maxResultBytes' | 'defaultMaxBytes'
>

/** The `keys` parameter: 1 to {@link MAX_TERMINAL_KEYS} key names, each checked by the refinement of the whole call. */
const keysParam = z
  .array(z.string())
  .min(1, 'keys must name at least one key')
  .max(MAX_TERMINAL_KEYS, `keys must name at most ${MAX_TERMINAL_KEYS} keys; to type a long text, give text instead`)
  .optional()
  .describe(
    `Keys to press instead of typing text, in order: ${KEY_NAMES_PHRASE}. ` +
      'E.g. ["Escape", ":", "w", "q", "Enter"] saves and quits vim, ["q"] quits less, ["Down", "Enter"] picks the next menu entry. ' +
      "Encoded for the program's current terminal modes.",
  )

/**
 * Parameters of terminal_send; `run_in_background` exists only when background sends are enabled.
 * A call types `text` or presses `keys` (exactly one), or only resizes (`rows` and `cols` alone).
 * `timeoutMs` may reach `maxTimeoutMs`, or for a background send the larger of it and `backgroundTimeoutMs`
 * (the bound a background send has anyway); `idleMs` may reach `maxTimeoutMs`.
 */
export function sendParameters(options: SendParameterOptions) {
  const { maxTimeoutMs } = options
  const backgroundMax = Math.max(maxTimeoutMs, options.backgroundTimeoutMs)
  const widest = options.enableRunInBackground ? backgroundMax : maxTimeoutMs
  const shape = {
    sessionId: sessionIdParam,
    text: z
      .string()
      .optional()
      .describe(
        'Text to type into the session, sent as UTF-8. With submit (the default) Enter follows, so this is one command line or one REPL input. ' +
          'Control characters are sent as they are. Give text or keys, not both.',
      ),
    keys: keysParam,
    submit: z
      .boolean()
      .optional()
      .describe(
        'With text: press Enter after it (default true). false sends the text alone: a partial line, or a control character such as "\\u0004" (Ctrl-D). ' +
          'Not with keys (press "Enter" as a key).',
      ),
    rows: rowsParam(
      'Window height in rows, with cols: the terminal is resized before the text or keys are sent; the program in front redraws. ' +
        'With neither text nor keys the call only resizes and returns the redrawn screen.',
    ),
    cols: colsParam('Window width in columns, with rows.'),
    waitFor: waitForParam,
    timeoutMs: millisParam(
      'timeoutMs',
      widest,
      widest === maxTimeoutMs ? 'maxTimeoutMs' : 'for a background send, the larger of maxTimeoutMs and backgroundTimeoutMs',
    ).describe(
      `Longest this send may wait, in ms (1 to ${maxTimeoutMs}; default: the terminal's own). [wait: timeout] does not stop the command.` +
        (options.enableRunInBackground ? ` A background send defaults to ${options.backgroundTimeoutMs} and may ask for up to ${backgroundMax}.` : ''),
    ),
    idleMs: millisParam('idleMs', maxTimeoutMs, 'maxTimeoutMs').describe(
      `Output silence that ends the wait as inferred_idle, in ms (1 to ${maxTimeoutMs}; default: the terminal's own). ` +
        'Without it, silence never ends the wait of a command proven not to read the terminal (a sleep, a build): give it to get control back early. ' +
        'Raise it for a command that is quiet for long stretches.',
    ),
    maxBytes: maxBytesParam(options),
  }
  if (!options.enableRunInBackground) return z.strictObject(shape).superRefine(checkInput)
  return z
    .strictObject({
      ...shape,
      run_in_background: z
        .boolean()
        .optional()
        .describe('Return at once with a job id instead of waiting; follow the job with job_output and stop it with job_kill (SIGINT). Text only.'),
    })
    .superRefine((args, issues) => {
      checkInput(args, issues)
      if (args.run_in_background === true && (args.keys !== undefined || args.rows !== undefined || args.cols !== undefined)) {
        issues.addIssue({
          code: 'custom',
          path: ['run_in_background'],
          message: 'run_in_background takes text only: press keys and resize in the foreground, where the result shows the screen',
        })
      }
      if (args.run_in_background === true && args.maxBytes !== undefined) {
        issues.addIssue({
          code: 'custom',
          path: ['maxBytes'],
          message: 'maxBytes sizes the result of this call; a background send returns a job id, so give maxBytes to job_output instead',
        })
      }
      // The field's own bound is the background one (above it, the field already said so); a
      // foreground send is held to maxTimeoutMs.
      const timeoutMs = args.timeoutMs
      if (args.run_in_background !== true && timeoutMs !== undefined && timeoutMs > maxTimeoutMs && timeoutMs <= backgroundMax) {
        issues.addIssue({
          code: 'custom',
          path: ['timeoutMs'],
          message: `timeoutMs must be at most ${maxTimeoutMs} ms (maxTimeoutMs) unless run_in_background is set`,
        })
      }
    })
}

/**
 * What a call sends, checked as a whole: text or keys (not both; neither only to resize), `submit`
 * with text only, key names a terminal can press, and a size of both rows and cols.
 */
function checkInput(args: InputArgs, issues: Pick<z.core.$RefinementCtx, 'addIssue'>): void {
  const refuse = (path: string, message: string) => issues.addIssue({ code: 'custom', path: [path], message })
  checkWindowSize(args, issues)
  if (args.text !== undefined && args.keys !== undefined) {
    refuse('keys', 'give text (typed) or keys (pressed), not both; to press Enter after keys, add "Enter" to keys')
  }
  const resizing = args.rows !== undefined || args.cols !== undefined
  if (args.text === undefined && args.keys === undefined && !resizing) {
    refuse('text', 'give text to type or keys to press (or only rows and cols, to resize); text "" with submit false sends nothing and waits')
  }
  if (args.text === undefined && args.submit !== undefined) {
    refuse('submit', args.keys !== undefined ? 'submit applies to text only: press Enter as a key, e.g. keys: ["q", "Enter"]' : 'submit applies to text only')
  }
  const problem = args.keys ? keysProblem(args.keys) : undefined
  if (problem) refuse('keys', problem)
}

/** What {@link checkInput} looks at. */
interface InputArgs {
  text?: string | undefined
  keys?: string[] | undefined
  submit?: boolean | undefined
  rows?: number | undefined
  cols?: number | undefined
}

/** The arguments of either schema variant, as `execute` sees them. */
type SendArgs = InputArgs & {
  sessionId: string
  run_in_background?: boolean
  waitFor?: string
  timeoutMs?: number
  idleMs?: number
  maxBytes?: number
}

/** What a call writes, as the service takes it: one kind of send, without its wait options. */
type SendInput =
  | Pick<TerminalTextSend, 'text' | 'submit' | 'size'>
  | Pick<TerminalKeysSend, 'kind' | 'keys' | 'size'>
  | Pick<TerminalResizeSend, 'kind' | 'size'>

/**
 * What the call writes: the text (Enter after it unless submit is false), or the keys, or (neither
 * given, which the schema admits only with rows and cols) a resize alone; with a size, the
 * terminal is resized first.
 */
function inputOf(args: SendArgs): SendInput {
  const size = windowSizeOf(args)
  if (args.keys) return size ? { kind: 'keys', keys: args.keys, size } : { kind: 'keys', keys: args.keys }
  if (args.text === undefined && size) return { kind: 'resize', size }
  const text = { text: args.text ?? '', submit: args.text === undefined ? false : (args.submit ?? true) }
  return size ? { ...text, size } : text
}

/** A call's title: the text typed, the keys pressed, or the resize. */
function sendTitle(args: SendArgs): string {
  const size = windowSizeOf(args)
  const what = args.keys ? `keys ${args.keys.join(' ')}` : args.text !== undefined ? args.text : size ? `resize to ${sizeText(size)}` : ''
  return `${args.sessionId}: ${keepUtf8Head(what, TITLE_TEXT_BYTES)}`
}

/** The wait options of a call, `waitFor` compiled. */
type WaitOptions = Pick<TerminalSendRequest, 'waitFor' | 'timeoutMs' | 'idleMs'>

/**
 * The wait options of a call as the service takes them; only the ones the model gave. `waitFor` is
 * compiled here, before anything is sent: a pattern the linear-time matcher does not take throws
 * its `LinePatternError` (code UNSUPPORTED_PATTERN), which the tool pipeline reports as it is.
 */
function waitOptions(args: SendArgs): WaitOptions {
  const options: WaitOptions = {}
  if (args.waitFor !== undefined) options.waitFor = LinePattern.compile(args.waitFor, 'waitFor')
  if (args.timeoutMs !== undefined) options.timeoutMs = args.timeoutMs
  if (args.idleMs !== undefined) options.idleMs = args.idleMs
  return options
}

/**
 * terminal_send: type into a session and wait until it is ready for input again (or hand the wait
 * to a background job). The result states why the wait ended and whether the shell still runs.
 */
export function sendTool(deps: ToolDeps) {
  const { config } = deps
  const background = config.enableRunInBackground
  return defineTool({
    name: 'terminal_send',
    description:
      'Type text into a terminal session (Enter appended by default), or press keys, and wait until the shell or program asks for input again. ' +
      'Returns the new output, then [wait: <reason>]: stdin_read means it is waiting for input; inferred_idle (output went quiet) and timeout do not prove the command finished; ' +
      'output_match means a line matched waitFor. [input: …] says what the terminal waits for now (prompt, continuation, password, program, keys, or none while busy). ' +
      '[exit: <n>] is the exit status of the shell command this call ran, when known; [session: …] says whether the terminal itself still runs. One send at a time per session. ' +
      "To wait for long-running work give waitFor (a regex for a line such as a server's ready message) and timeoutMs. " +
      'While a full-screen program (vim, less, top, a menu) holds the terminal, the result is its screen under [screen: <cols> cols x <rows> rows, cursor at row <row>, col <col>] instead of new output. ' +
      '[human: watching] or [human: typing] means a person is attached to the session (dsh-terminal attach, or the web view) and sees what you type; ' +
      'while they type, sends are refused with HUMAN_ACTIVE: wait a few seconds or terminal_read what they did, then send again. ' +
      '[secret: …] means a program asks for a password: ask the user to type it themselves (dsh-terminal attach <id>) or to give it to you; never guess one.' +
      (background ? ' For a command that runs long, set run_in_background and follow the job with job_output.' : ''),
    kind: 'execute',
    parameters: sendParameters(config),
    async execute(rawArgs, call) {
      const args = rawArgs as SendArgs
      const sessionId = toSessionId(args.sessionId)
      const wait = waitOptions(args)
      if (args.run_in_background === true) return sendInBackground(deps, call.agent, sessionId, args, wait, call.callId)
      return sendInForeground(deps, call.agent, sessionId, args, wait, call.signal, call.callId)
    },
    present: (rawArgs) => {
      const args = rawArgs as SendArgs
      const title = sendTitle(args)
      if (args.run_in_background === true) return { kind: 'execute', title }
      return { kind: 'execute', title, card: { type: 'terminal', sessionId: args.sessionId } }
    },
    finalizeContent: finalizeWith(config),
  })
}

function sendInBackground(
  { ctx, terminals, config, holders }: ToolDeps,
  owner: Agent,
  sessionId: TerminalSessionId,
  args: SendArgs,
  wait: WaitOptions,
  callId: string,
): ToolOutput {
  // Optional service, read at call time: the plugin never requires dsh-jobs to be mounted.
  const jobs = ctx.get('jobs') as JobStarter | undefined
  if (!jobs) throw jobsUnavailable()
  let jobId: string
  try {
    jobId = startBackgroundSend({
      jobs,
      terminals,
      owner,
      sessionId,
      // The schema admits only text here: keys and sizes are foreground-only.
      request: { text: args.text ?? '', submit: args.submit ?? true, ...wait },
      callId,
      timeoutMs: args.timeoutMs ?? config.backgroundTimeoutMs,
      outputLimitBytes: config.maxResultBytes,
      holders,
    })
  } catch (error) {
    throw explainBusy(holders, sessionId, error)
  }
  return fittedOutput({ body: backgroundText(jobId) }, config.maxResultBytes, { sessionId, jobId, background: true })
}

async function sendInForeground(
  { terminals, config, holders }: ToolDeps,
  owner: Agent,
  sessionId: TerminalSessionId,
  args: SendArgs,
  wait: WaitOptions,
  signal: AbortSignal,
  callId: string,
): Promise<ToolOutput> {
  const request: TerminalSendRequest = { ...inputOf(args), signal, ...wait, callId }
  let handle: TerminalSendHandle
  try {
    handle = terminals.startSend(owner, sessionId, request)
  } catch (error) {
    throw explainBusy(holders, sessionId, error)
  }
  const result = await settleOrCancel(handle, signal, sessionId)
  const meta = { sessionId, background: false, ...sendResultMeta(result) }
  const back = { sessionId, windowBytes: config.defaultMaxBytes, maxResultBytes: config.maxResultBytes }
  return fittedOutput(sendLayout(result, back), args.maxBytes ?? config.defaultMaxBytes, meta, { foldRepeats: config.foldRepeatedLines })
}

/** The structured facts of a settled foreground send (or a resume's wait), for a result's `meta`. */
export function sendResultMeta(result: TerminalSendResult): Record<string, unknown> {
  const meta: Record<string, unknown> = { waitReason: result.waitReason, sessionStatus: { ...result.sessionStatus } }
  if (typeof result.exitCode === 'number') meta.exitCode = result.exitCode
  if (result.input) meta.input = inputMeta(result.input)
  if (result.match) meta.match = { text: result.match.text, line: result.match.line }
  if (result.screen) meta.screen = screenMeta(result.screen)
  if (result.human) meta.human = result.human
  return meta
}

/**
 * The send's result, or, once the call is cancelled, a CANCELLED error after the send was interrupted
 * (SIGINT to the foreground group) and settled, or after {@link CANCEL_GRACE_MS} at most.
 */
export async function settleOrCancel(
  handle: TerminalSendHandle,
  signal: AbortSignal,
  sessionId: TerminalSessionId,
  graceMs = CANCEL_GRACE_MS,
): Promise<TerminalSendResult> {
  if (!signal.aborted) {
    try {
      // A send that settled first is a result even if the cancel arrives right after.
      return await raceAbort(handle.done, signal)
    } catch (error) {
      if (!signal.aborted) throw error
    }
  }
  // Cancel explicitly as well as through the request's signal: cancel() is idempotent by contract.
  handle.cancel()
  await settledWithin(handle.done, graceMs)
  throw sendCancelled(sessionId)
}
