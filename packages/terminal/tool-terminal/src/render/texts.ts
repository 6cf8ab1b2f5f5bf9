import type {
  TerminalHumanPresence,
  TerminalInputState,
  TerminalOutputMatch,
  TerminalProgram,
  TerminalReadResult,
  TerminalScreen,
  TerminalSendResult,
  TerminalSessionSnapshot,
  TerminalSessionStatus,
  TerminalSignal,
  TerminalSize,
  TerminalSpawnResult,
  TerminalUnreachableTarget,
} from 'dsh-terminal'
import { formatDuration, oneLine, utf8ByteLength } from 'dsh-basics'
import type { MetaLine, ResultLayout } from './result-fit'

// Every model-visible text of the six tools is written here, once, as a pure function of the facts.

/** Shown instead of an empty send viewport, so "nothing printed" is never an empty result. */
export const NO_NEW_OUTPUT = '(no new output)'

/** Shown instead of an empty scrollback page. */
export const NO_OUTPUT = '(no output)'

/** The whole text of `terminal_list` for an owner without sessions. */
export const NO_SESSIONS = '(no terminal sessions)'

/** Bytes of a program name shown in an input line: argv[0] is the program's to choose, so it is bounded. */
export const MAX_PROGRAM_NAME_BYTES = 64

/** Bytes of the matched line shown in `[match: …]`; the whole line is in `meta.match`. */
export const MAX_MATCH_LINE_BYTES = 200

/** Shown instead of the rows of a screen that shows nothing. */
export const BLANK_SCREEN = '(blank screen)'

/** Bytes of a window title shown in `[title: …]`: the title is the program's to choose, so it is bounded. */
export const MAX_TITLE_BYTES = 200

/** `python3, pid 4711` (plus `, running 3.2 s` when asked and known): who the terminal belongs to. */
function programFacts(program: TerminalProgram, withElapsed: boolean): string {
  const facts = `${oneLine(program.name, MAX_PROGRAM_NAME_BYTES)}, pid ${program.pid}`
  return withElapsed && program.elapsedMs !== undefined ? `${facts}, running ${formatDuration(program.elapsedMs)}` : facts
}

/** ` (python3, pid 4711)`, or nothing without a program. */
function inParentheses(program: TerminalProgram | undefined, extra: string[] = []): string {
  const parts = program ? [programFacts(program, false), ...extra] : extra
  return parts.length ? ` (${parts.join(', ')})` : ''
}

/**
 * The input state in short, without advice: `input: prompt`, `input: password (sudo, pid 1)`,
 * `input: keys (vim, pid 9, alternate screen)`, `input: none (busy: sleep, pid 7)`,
 * `input: unknown (in front: python3, pid 4)`. Used where facts are listed, e.g. a job's detail.
 */
export function inputBrief(input: TerminalInputState): string {
  switch (input.kind) {
    case 'prompt':
    case 'continuation':
      return `input: ${input.kind}`
    case 'password':
    case 'program':
      return `input: ${input.kind}${inParentheses(input.program)}`
    case 'keys':
      return `input: keys${inParentheses(input.program, input.alternateScreen ? ['alternate screen'] : [])}`
    case 'busy': {
      const front = input.program ? `: ${programFacts(input.program, false)}` : ''
      return input.reading === 'unprovable' ? `input: unknown${front ? ` (in front${front})` : ''}` : `input: none${front ? ` (busy${front})` : ''}`
    }
  }
}

/**
 * The one line that says what the terminal waits for, e.g. `[input: prompt]`,
 * `[input: password (sudo, pid 4711): a secret is asked for; get it from the user, never invent one]`,
 * `[input: none; busy: sleep, pid 4711, running 3.2 s, not reading the terminal]`. A missing program
 * leaves out its part; names are one line and at most {@link MAX_PROGRAM_NAME_BYTES} bytes.
 */
export function inputLine(input: TerminalInputState): string {
  switch (input.kind) {
    case 'prompt':
      return '[input: prompt]'
    case 'continuation':
      return '[input: continuation: the shell needs the rest of the command; send it, or "\\u0003" (Ctrl-C) to abandon it]'
    case 'password':
      return `[input: password${inParentheses(input.program)}: a secret is asked for; get it from the user, never invent one]`
    case 'program':
    case 'keys':
      return `[${inputBrief(input)}]`
    case 'busy': {
      const program = input.program ? programFacts(input.program, true) : undefined
      if (input.reading === 'unprovable') return `[input: unknown on this platform${program ? `; in front: ${program}` : ''}]`
      const facts = [program, input.reading === 'no' ? 'not reading the terminal' : undefined].filter((fact) => fact !== undefined)
      return `[input: none; busy${facts.length ? `: ${facts.join(', ')}` : ''}]`
    }
  }
}

/**
 * `[secret: pty-1 waits for a password …]`: what a model must do when a session asks for a secret,
 * naming the command with which the user types it in that very session, out of the model's sight.
 */
export function secretLine(sessionId: string): string {
  return `[${secretAdvice(sessionId)}]`
}

/** The secret line's words without brackets, so a job's status detail can end with them. */
function secretAdvice(sessionId: string): string {
  return (
    `secret: ${sessionId} waits for a password or other secret. Ask the user: they can type it themselves with ` +
    `dsh-terminal attach ${sessionId} (from another terminal), or give it to you. Never guess one or type a password you were not given`
  )
}

/** `[human: watching]` or `[human: typing]`: a person is attached to the session and sees what the model does. */
export function humanLine(human: TerminalHumanPresence): string {
  return `[human: ${human}]`
}

/** `[match: <the matched line>]`, one line of at most {@link MAX_MATCH_LINE_BYTES} bytes of it. */
export function matchLine(match: TerminalOutputMatch): string {
  return `[match: ${oneLine(match.line, MAX_MATCH_LINE_BYTES)}]`
}

/** `160x40`: a window size the usual way round, columns x rows (as `80x24`). */
export function sizeText(size: TerminalSize): string {
  return `${size.cols}x${size.rows}`
}

/**
 * `[screen: 160 cols x 40 rows, cursor at row 12, col 5, alternate]`: every number says what it
 * counts (the cursor 1-based), and `alternate` only while a program uses the alternate screen.
 */
export function screenLine(screen: TerminalScreen): string {
  const { size, cursor } = screen
  return `[screen: ${size.cols} cols x ${size.rows} rows, cursor at row ${cursor.row}, col ${cursor.col}${screen.alternateScreen ? ', alternate' : ''}]`
}

/** The screen line, then `[title: …]` on its own line when a program set a title (one line, at most {@link MAX_TITLE_BYTES}). */
export function screenHeader(screen: TerminalScreen): string {
  const line = screenLine(screen)
  return screen.title ? `${line}\n[title: ${oneLine(screen.title, MAX_TITLE_BYTES)}]` : line
}

/** A screen's facts for `meta`; its rows are the result's text, so meta does not repeat them. */
export interface ScreenMeta {
  size: { rows: number; cols: number }
  cursor: { row: number; col: number }
  alternateScreen: boolean
  title?: string
}

/** The screen's facts as a plain, detached object for `meta`. */
export function screenMeta(screen: TerminalScreen): ScreenMeta {
  const meta: ScreenMeta = {
    size: { rows: screen.size.rows, cols: screen.size.cols },
    cursor: { row: screen.cursor.row, col: screen.cursor.col },
    alternateScreen: screen.alternateScreen,
  }
  if (screen.title) meta.title = screen.title
  return meta
}

/**
 * A screen as a result's body: its rows under {@link screenHeader}, never folded (a row's place is
 * what the cursor refers to), {@link BLANK_SCREEN} when nothing shows.
 */
function screenBody(screen: TerminalScreen): Pick<ResultLayout, 'bodyHead' | 'body' | 'emptyBody' | 'foldBody'> {
  return { bodyHead: screenHeader(screen), body: screen.lines.join('\n'), emptyBody: BLANK_SCREEN, foldBody: false }
}

/**
 * A `terminal_read` of the screen: {@link screenHeader}, the rows, then `[input: …]` when known
 * (optional under a tiny cap). Under a cap the rows keep their top and bottom around one elision line.
 */
export function screenReadLayout(screen: TerminalScreen, input?: TerminalInputState): ResultLayout {
  return { ...screenBody(screen), trailer: input ? [{ text: inputLine(input), optional: true }] : [] }
}

/** The input state as a plain, detached object for `meta` (no shared references into the backend). */
export function inputMeta(input: TerminalInputState): TerminalInputState {
  return 'program' in input && input.program ? { ...input, program: { ...input.program } } : { ...input }
}

/** `running`, or `exited code=<n> signal=<s>` (a missing value prints as `null`). */
export function statusText(status: TerminalSessionStatus): string {
  return status.kind === 'running' ? 'running' : `exited code=${status.exitCode} signal=${status.signal}`
}

/** `pty-1`, or `pty-1 (main)` when the session has a display name. */
export function sessionLabel(snapshot: Pick<TerminalSessionSnapshot, 'sessionId' | 'name'>): string {
  return snapshot.name === undefined ? snapshot.sessionId : `${snapshot.sessionId} (${snapshot.name})`
}

/** ` [target: build-1]` for a session on a named target of the subprocess provider; empty on this machine. */
export function targetText(snapshot: Pick<TerminalSessionSnapshot, 'target'>): string {
  return snapshot.target === undefined ? '' : ` [target: ${snapshot.target}]`
}

/**
 * `started terminal session pty-1 (main) [type: shell]`, then the startup output when there was any
 * (` [target: build-1]` after the type for a session on a named target).
 * Under a tiny cap the name is dropped from the head (the caller chose it; the id is what matters).
 */
export function openLayout(opened: TerminalSpawnResult): ResultLayout {
  return {
    head: `started terminal session ${sessionLabel(opened)} [type: ${opened.type}]${targetText(opened)}`,
    compactHead: `started terminal session ${opened.sessionId} [type: ${opened.type}]${targetText(opened)}`,
    body: opened.motd,
  }
}

/**
 * The terminal_read call that returns scrollback lines `fromLine … fromLine+count−1` of a session,
 * as an elision line quotes it: `terminal_read {"sessionId":"pty-1","fromLine":21,"count":500}`,
 * with `maxBytes` when the lines need a larger window than the default.
 */
export function readCallText(sessionId: string, fromLine: number, count: number, maxBytes?: number): string {
  return `terminal_read ${JSON.stringify(maxBytes === undefined ? { sessionId, fromLine, count } : { sessionId, fromLine, count, maxBytes })}`
}

/** Bytes a read page adds around its lines: `[lines: …]`, `[input: …]` and the truncation marker. */
export const READ_PAGE_OVERHEAD_BYTES = 512

/** Where a result's left-out lines can be read back: the session and the windows a read may ask for. */
export interface ReadBack {
  sessionId: string
  /** The window a read gets without `maxBytes` (`defaultMaxBytes`). */
  windowBytes: number
  /** The largest `maxBytes` a read may ask for (`maxResultBytes`). */
  maxResultBytes: number
}

/**
 * The read call for lines of `back.sessionId`: when the left-out lines (`bytes`) need more than the
 * default window, it asks for one that holds them (up to `maxResultBytes`; a larger middle comes
 * back shaped again, naming the next call).
 */
function readCallFor(back: ReadBack): (fromLine: number, count: number, bytes: number) => string {
  return (fromLine, count, bytes) => {
    const needed = bytes + READ_PAGE_OVERHEAD_BYTES
    return readCallText(back.sessionId, fromLine, count, needed > back.windowBytes ? Math.min(needed, back.maxResultBytes) : undefined)
  }
}

/**
 * Earlier output first, under `[earlier output, printed after the previous result]` (what the
 * session printed between the previous result and this send), then `<viewport or (no new output)>`,
 * `[wait: <reason>]`, `[match: <line>]` when `waitFor` matched, `[input: …]` when the backend
 * said what the terminal waits for (then, for a password, the {@link secretLine} of `sessionId`),
 * `[exit: <n>]` when the backend saw this send's command end (never an earlier one's),
 * `[session: <status>]`, `[human: …]` while a person is attached, and the truncation marker when
 * this result lost bytes. All but the wait and session lines are optional: a tiny cap drops them first.
 * With `back` and the backend's `firstLine`, an elided middle names the terminal_read call for its
 * lines the scrollback still kept (`result.oldestLine` on).
 * When a full-screen program holds the terminal (`result.screen`), its screen replaces the viewport.
 */
export function sendLayout(result: TerminalSendResult, back?: ReadBack): ResultLayout {
  const sessionId = back?.sessionId
  const trailer: MetaLine[] = [{ text: `[wait: ${result.waitReason}]` }]
  if (result.match) trailer.push({ text: matchLine(result.match), optional: true })
  if (result.input) trailer.push(...inputLines(result.input, sessionId))
  if (typeof result.exitCode === 'number') trailer.push({ text: `[exit: ${result.exitCode}]`, optional: true })
  trailer.push({ text: `[session: ${statusText(result.sessionStatus)}]` })
  if (result.human) trailer.push({ text: humanLine(result.human), optional: true })
  // A screen replaces the viewport, whose redraw fragments (and what they lost) are not shown.
  const layout: ResultLayout = result.screen ? { ...screenBody(result.screen), trailer } : viewportLayout(result, trailer, back)
  const lines = result.screen && back ? drawnLinesLine(result, result.screen, back) : undefined
  if (lines) layout.bodyHead = `${layout.bodyHead}\n${lines}`
  if (result.earlierOutput) {
    layout.earlier = result.earlierOutput
    if (result.earlierTruncated) layout.truncated = true
  }
  return layout
}

/**
 * A program drew in place on the normal screen and its output was longer than the screen shows:
 * `[drawn in place: the screen shows the end of N lines of output; terminal_read {…} returns them]`,
 * naming the read of the line history. Nothing when the screen holds it all or its lines are not numbered.
 */
function drawnLinesLine(result: TerminalSendResult, screen: TerminalScreen, back: ReadBack): string | undefined {
  if (screen.alternateScreen || result.viewport === '') return undefined
  const head = result.outputHead
  const firstLine = head ? head.firstLine : result.firstLine
  if (firstLine === undefined) return undefined
  const viewportLines = result.viewport.split('\n').length
  const count = head ? head.text.split('\n').length + head.gapLines + viewportLines : viewportLines
  if (count <= screen.lines.length) return undefined
  const bytes = utf8ByteLength(result.viewport) + (head ? utf8ByteLength(head.text) + head.gapBytes : 0)
  return `[drawn in place: the screen shows the end of ${count} lines of output; ${readCallFor(back)(firstLine, count, bytes)} returns them]`
}

/** The input line, and for a password asked in a known session the {@link secretLine}; both optional under a tiny cap. */
function inputLines(input: TerminalInputState, sessionId: string | undefined): MetaLine[] {
  const lines: MetaLine[] = [{ text: inputLine(input), optional: true }]
  if (input.kind === 'password' && sessionId !== undefined) lines.push({ text: secretLine(sessionId), optional: true })
  return lines
}

/** The send's viewport as a body (led by the output's head the backend kept apart), numbered when it can be. */
function viewportLayout(result: TerminalSendResult, trailer: MetaLine[], back: ReadBack | undefined): ResultLayout {
  const layout: ResultLayout = { body: result.viewport, emptyBody: NO_NEW_OUTPUT, trailer, truncated: result.truncated }
  const head = result.outputHead
  if (head && result.viewport !== '') {
    // The backend kept the output's beginning apart: it leads the body, and what it lost between
    // the two is the body's gap (always left out, inside the elision).
    layout.body = `${head.text}\n${result.viewport}`
    layout.bodyGap = { after: head.text.split('\n').length - 1, lines: head.gapLines, bytes: head.gapBytes }
    if (back && head.firstLine !== undefined) {
      layout.bodyFirstLine = head.firstLine
      layout.readCall = readCallFor(back)
    }
  } else if (back && result.firstLine !== undefined) {
    layout.bodyFirstLine = result.firstLine
    layout.readCall = readCallFor(back)
  }
  // Lines the scrollback dropped before the result was shaped cannot be read back: no call names them.
  if (layout.readCall && result.oldestLine !== undefined) layout.oldestLine = result.oldestLine
  return layout
}

/**
 * `<page text or (no output)>` then `[lines: <begin>-<end> of <total>]` (absolute line numbers,
 * plus `, lines before <n> are no longer kept` once the scrollback dropped some), then `[input: …]`
 * when known (and for a password, with `back`, the secret line; optional under a tiny cap), and the
 * marker when the page lost bytes. With `back` an elided middle names the terminal_read call that returns it.
 */
export function readLayout(page: TerminalReadResult, input?: TerminalInputState, back?: ReadBack): ResultLayout {
  const gone = page.oldestLine > 1 ? `, lines before ${page.oldestLine} are no longer kept` : ''
  const trailer: MetaLine[] = [{ text: `[lines: ${page.lineBegin}-${page.lineEnd} of ${page.totalLines}${gone}]` }]
  if (input) trailer.push(...inputLines(input, back?.sessionId))
  const layout: ResultLayout = { body: page.text, emptyBody: NO_OUTPUT, trailer, truncated: page.truncated }
  if (back && page.text !== '') {
    layout.bodyFirstLine = page.lineBegin
    layout.readCall = readCallFor(back)
    layout.oldestLine = page.oldestLine
  }
  return layout
}

/** `delivered SIGINT to foreground process group 4242`. */
export function signalText(signal: TerminalSignal, targetPgid: number): string {
  return `delivered ${signal} to foreground process group ${targetPgid}`
}

/** `closed terminal session pty-1`, or, when another close was already running, that it joined it. */
export function closeText(sessionId: string, closedNow: boolean): string {
  return closedNow ? `closed terminal session ${sessionId}` : `terminal session ${sessionId} was already closing`
}

/** How long ago `at` was, coarsely, as a person says it: `12s`, `4m`, `2h`. */
export function agoText(at: number, now: number): string {
  const seconds = Math.max(0, Math.round((now - at) / 1000))
  if (seconds < 60) return `${seconds}s`
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`
  return `${Math.floor(seconds / 3600)}h`
}

/**
 * `pty-1 (main) [shell] running pid=4242 size=40x160 human=watching`, plus ` [input: prompt]` when the
 * input state is known; pid and size only when the backend has them, human only while a person is attached.
 * A detached session (its agent disconnected; terminal_open resume adopts it) says `detached 2m ago` after its status;
 * one on a named target of the subprocess provider says `target=build-1`.
 */
export function listLine(snapshot: TerminalSessionSnapshot, input?: TerminalInputState, now = Date.now()): string {
  const detached = snapshot.detachedAt === undefined ? '' : ` detached ${agoText(snapshot.detachedAt, now)} ago`
  const pid = snapshot.pid === undefined ? '' : ` pid=${snapshot.pid}`
  const size = snapshot.size === undefined ? '' : ` size=${sizeText(snapshot.size)}`
  const human = snapshot.human === undefined ? '' : ` human=${snapshot.human}`
  const state = input ? ` ${inputLine(input)}` : ''
  const target = snapshot.target === undefined ? '' : ` target=${snapshot.target}`
  return `${sessionLabel(snapshot)} [${snapshot.type}] ${statusText(snapshot.status)}${detached}${target}${pid}${size}${human}${state}`
}

/**
 * A resumed session's result: `resumed terminal session pty-3 (build) [type: shell]`, then the
 * output since the last result delivered for it and the usual trailer (see {@link sendLayout}).
 */
export function resumeLayout(snapshot: TerminalSessionSnapshot, result: TerminalSendResult, back: ReadBack): ResultLayout {
  return {
    ...sendLayout(result, back),
    head: `resumed terminal session ${sessionLabel(snapshot)} [type: ${snapshot.type}]${targetText(snapshot)}`,
    compactHead: `resumed terminal session ${snapshot.sessionId} [type: ${snapshot.type}]`,
  }
}

/** A resumed session whose background job `jobId` still holds it: the job, not this result, carries its output. */
export function resumeHeldLayout(snapshot: TerminalSessionSnapshot, jobId: string): ResultLayout {
  return {
    head: `resumed terminal session ${sessionLabel(snapshot)} [type: ${snapshot.type}]${targetText(snapshot)}`,
    compactHead: `resumed terminal session ${snapshot.sessionId} [type: ${snapshot.type}]`,
    body: '',
    trailer: [
      {
        text: `[background job ${jobId} still runs on this session and is yours now: job_output shows its output so far (wait: true blocks until it ends, with its exit); send here once it ended]`,
      },
    ],
  }
}

/**
 * Every session on its own line (with `inputs[i]`, the input state of `snapshots[i]`, when known),
 * or {@link NO_SESSIONS}; under a cap the newest lines survive. Each target the listing could not
 * ask adds a kept line after them (its sessions are missing): `target build-2 unreachable: <reason>`.
 */
export function listLayout(
  snapshots: readonly TerminalSessionSnapshot[],
  inputs: readonly (TerminalInputState | undefined)[] = [],
  unreachable: readonly TerminalUnreachableTarget[] = [],
): ResultLayout {
  const body = snapshots.length ? snapshots.map((snapshot, index) => listLine(snapshot, inputs[index])).join('\n') : NO_SESSIONS
  return { body, ...(unreachable.length ? { trailer: unreachable.map(({ target, reason }) => ({ text: unreachableLine(target, reason) })) } : {}) }
}

/** A target a listing could not ask, on one line whatever its reason holds. */
function unreachableLine(target: string, reason: string): string {
  return `target ${target} unreachable: ${oneLine(reason, 512)}`
}

/** `started background job pty-send-1`. */
export function backgroundText(jobId: string): string {
  return `started background job ${jobId}`
}

/**
 * The facts of a settled background send for its job's status detail:
 * `wait: stdin_read, input: password (sudo, pid 1), exit: 0, session: running`, plus
 * `, human: watching` while a person is attached and `, output truncated` when the job's output (its
 * deltas or the final viewport) lost bytes. A password asked in a known session adds the {@link secretLine}'s advice.
 */
export function backgroundDetail(result: TerminalSendResult, truncated: boolean, sessionId?: string): string {
  const facts = [`wait: ${result.waitReason}`]
  if (result.input) facts.push(inputBrief(result.input))
  if (typeof result.exitCode === 'number') facts.push(`exit: ${result.exitCode}`)
  facts.push(`session: ${statusText(result.sessionStatus)}`)
  if (result.human) facts.push(`human: ${result.human}`)
  if (truncated) facts.push('output truncated')
  const detail = facts.join(', ')
  return result.input?.kind === 'password' && sessionId !== undefined ? `${detail}; ${secretAdvice(sessionId)}` : detail
}
