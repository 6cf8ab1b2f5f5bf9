import type { TerminalReadResult, TerminalSendResult, TerminalSessionSnapshot, TerminalSessionStatus, TerminalSignal, TerminalSpawnResult } from 'dsh-terminal'
import type { MetaLine, ResultLayout } from './bound'

// Every model-visible text of the six tools is written here, once, as a pure function of the facts.

/** Shown instead of an empty send viewport, so "nothing printed" is never an empty result. */
export const NO_NEW_OUTPUT = '(no new output)'

/** Shown instead of an empty scrollback page. */
export const NO_OUTPUT = '(no output)'

/** The whole text of `terminal_list` for an owner without sessions. */
export const NO_SESSIONS = '(no terminal sessions)'

/** `running`, or `exited code=<n> signal=<s>` (a missing value prints as `null`). */
export function statusText(status: TerminalSessionStatus): string {
  return status.kind === 'running' ? 'running' : `exited code=${status.exitCode} signal=${status.signal}`
}

/** `pty-1`, or `pty-1 (main)` when the session has a display name. */
export function sessionLabel(snapshot: Pick<TerminalSessionSnapshot, 'sessionId' | 'name'>): string {
  return snapshot.name === undefined ? snapshot.sessionId : `${snapshot.sessionId} (${snapshot.name})`
}

/**
 * `started terminal session pty-1 (main) [type: shell]`, then the startup output when there was any.
 * Under a tiny cap the name is dropped from the head (the caller chose it; the id is what matters).
 */
export function openLayout(opened: TerminalSpawnResult): ResultLayout {
  return {
    head: `started terminal session ${sessionLabel(opened)} [type: ${opened.type}]`,
    compactHead: `started terminal session ${opened.sessionId} [type: ${opened.type}]`,
    body: opened.motd,
  }
}

/**
 * Earlier output first, under `[earlier output, printed after the previous result]` (what the
 * session printed between the previous result and this send), then
 * `<viewport or (no new output)>`, `[wait: <reason>]`, `[exit: <n>]` when the backend saw this send's
 * command end (never an earlier one's), `[session: <status>]`, and the truncation marker when this result lost bytes.
 */
export function sendLayout(result: TerminalSendResult): ResultLayout {
  const trailer: MetaLine[] = [{ text: `[wait: ${result.waitReason}]` }]
  if (typeof result.exitCode === 'number') trailer.push({ text: `[exit: ${result.exitCode}]`, optional: true })
  trailer.push({ text: `[session: ${statusText(result.sessionStatus)}]` })
  const layout: ResultLayout = { body: result.viewport === '' ? NO_NEW_OUTPUT : result.viewport, trailer, truncated: result.truncated }
  if (result.earlierOutput) {
    layout.earlier = result.earlierOutput
    if (result.earlierTruncated) layout.truncated = true
  }
  return layout
}

/** `<page text>` then `[lines: <begin>-<end> of <total>]`, and the marker when the page lost bytes. */
export function readLayout(page: TerminalReadResult): ResultLayout {
  return {
    body: page.text === '' ? NO_OUTPUT : page.text,
    trailer: [{ text: `[lines: ${page.lineBegin}-${page.lineEnd} of ${page.totalLines}]` }],
    truncated: page.truncated,
  }
}

/** `delivered SIGINT to foreground process group 4242`. */
export function signalText(signal: TerminalSignal, targetPgid: number): string {
  return `delivered ${signal} to foreground process group ${targetPgid}`
}

/** `closed terminal session pty-1`, or, when another close was already running, that it joined it. */
export function closeText(sessionId: string, closedNow: boolean): string {
  return closedNow ? `closed terminal session ${sessionId}` : `terminal session ${sessionId} was already closing`
}

/** `pty-1 (main) [shell] running pid=4242`: one line per session. */
export function listLine(snapshot: TerminalSessionSnapshot): string {
  const pid = snapshot.pid === undefined ? '' : ` pid=${snapshot.pid}`
  return `${sessionLabel(snapshot)} [${snapshot.type}] ${statusText(snapshot.status)}${pid}`
}

/** Every session on its own line, or {@link NO_SESSIONS}; under a cap the newest lines survive. */
export function listLayout(snapshots: readonly TerminalSessionSnapshot[]): ResultLayout {
  return { body: snapshots.length ? snapshots.map(listLine).join('\n') : NO_SESSIONS }
}

/** `started background job pty-send-1`. */
export function backgroundText(jobId: string): string {
  return `started background job ${jobId}`
}

/**
 * The facts of a settled background send for its job's status detail:
 * `wait: stdin_read, exit: 0, session: running`, plus `, output truncated` when the job's output
 * (its deltas or the final viewport) lost bytes.
 */
export function backgroundDetail(result: TerminalSendResult, truncated: boolean): string {
  const facts = [`wait: ${result.waitReason}`]
  if (typeof result.exitCode === 'number') facts.push(`exit: ${result.exitCode}`)
  facts.push(`session: ${statusText(result.sessionStatus)}`)
  if (truncated) facts.push('output truncated')
  return facts.join(', ')
}
