import type { TerminalSendResult, TerminalSendStart } from 'dsh-terminal'
import type { AsciicastEvent } from './asciicast'

/**
 * The labels of the `m` events a recording holds, written and read here only: one when a send
 * starts (`send 3 (call mcp-17)`), one when it settles (`send 3 done (call mcp-17): stdin_read, exit 0`),
 * and `recording stopped: …` when a bound ended the recording early.
 */

/** The marker of a send starting. */
export function sendStartLabel(send: Pick<TerminalSendStart, 'number' | 'callId'>): string {
  return `send ${send.number}${callPart(send.callId)}`
}

/** The marker of a send settling: its wait reason, the exit status it saw, and the shell's own exit. */
export function sendEndLabel(send: Pick<TerminalSendStart, 'number' | 'callId'>, result: TerminalSendResult | undefined): string {
  const head = `send ${send.number} done${callPart(send.callId)}`
  if (!result) return `${head}: failed`
  const parts: string[] = [result.waitReason]
  if (typeof result.exitCode === 'number') parts.push(`exit ${result.exitCode}`)
  const status = result.sessionStatus
  if (status.kind === 'exited') parts.push(status.signal ? `shell killed by ${status.signal}` : `shell exited ${status.exitCode ?? 'unknown'}`)
  return `${head}: ${parts.join(', ')}`
}

/** The marker written when a recording stops before its session ends. */
export function stoppedLabel(reason: string): string {
  return `recording stopped: ${reason}`
}

/** A call id as a marker shows it: printable and short, so a label stays one readable line. */
function callPart(callId: string | undefined): string {
  if (callId === undefined) return ''
  const shown = callId.replace(/[^\x21-\x7e]/g, '?').slice(0, 80)
  return ` (call ${shown})`
}

const SEND_START = /^send (\d+)(?: \(call ([^)]*)\))?$/
const SEND_END = /^send (\d+) done(?: \(call ([^)]*)\))?: (.*)$/

/** One send of a recording, as a timeline shows it. */
export interface RecordedSend {
  /** Its number in the session (1-based): the K of `replay --from-marker K`. */
  readonly number: number
  /** Seconds into the recording at which it started. */
  readonly time: number
  /** Position of its start marker among the recording's events (where a replay from it begins). */
  readonly index: number
  /** The tool call that asked for it, when recorded. */
  readonly callId?: string
  /** How it ended (`stdin_read, exit 0`), once its end marker is in the recording. */
  readonly outcome?: string
}

/** The sends of a recording in order, each with its outcome when the recording holds it. */
export function recordedSends(events: readonly AsciicastEvent[]): RecordedSend[] {
  const sends = new Map<number, { number: number; time: number; index: number; callId?: string; outcome?: string }>()
  for (const [index, event] of events.entries()) {
    if (event.code !== 'm') continue
    const start = SEND_START.exec(event.data)
    if (start) {
      const send: { number: number; time: number; index: number; callId?: string } = { number: Number(start[1]), time: event.time, index }
      if (start[2] !== undefined) send.callId = start[2]
      sends.set(send.number, send)
      continue
    }
    const end = SEND_END.exec(event.data)
    const known = end ? sends.get(Number(end[1])) : undefined
    if (known && end) known.outcome = end[3]!
  }
  return [...sends.values()]
}
