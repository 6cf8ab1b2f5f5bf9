import { readFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { errorMessage } from 'dsh-basics'
import { type AsciicastEvent, parseAsciicast, recordedSends } from 'dsh-terminal-recorder'

/** The longest pause replay keeps between two events, in recorded seconds (hours of idling play as this). */
export const MAX_PAUSE_SECONDS = 2

/** What `replay` was asked for. */
export interface ReplayRequest {
  readonly file: string
  /** Playback speed factor; 0 prints everything at once. */
  readonly speed: number
  /** Start at the marker of this send (1-based), leaving out what was printed before it. */
  readonly fromMarker?: number
}

/** Where replay writes and waits (stdout and real time, unless a test says otherwise). */
export interface ReplayIo {
  readonly stdout: NodeJS.WritableStream
  readonly stderr: NodeJS.WritableStream
}

/** Parse `replay FILE [--speed N] [--from-marker K]`; a string is the usage error. */
export function parseReplayArgs(argv: readonly string[]): ReplayRequest | string {
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: { speed: { type: 'string' }, 'from-marker': { type: 'string' } },
    })
  } catch (error) {
    return errorMessage(error).split('\n')[0]!
  }
  const { values, positionals } = parsed
  if (positionals.length !== 1) return positionals.length === 0 ? 'replay needs a recording file' : `replay takes one file, got "${positionals[1]}" too`
  const speed = values.speed === undefined ? 1 : Number(values.speed)
  if (values.speed !== undefined && !(values.speed.trim() !== '' && Number.isFinite(speed) && speed >= 0)) {
    return `--speed wants a number ≥ 0 (0 prints without pauses), not "${values.speed}"`
  }
  const request: { file: string; speed: number; fromMarker?: number } = { file: positionals[0]!, speed }
  if (values['from-marker'] !== undefined) {
    const marker = Number(values['from-marker'])
    if (!/^\d+$/.test(values['from-marker']) || marker < 1) return `--from-marker wants a send number ≥ 1, not "${values['from-marker']}"`
    request.fromMarker = marker
  }
  return request
}

/**
 * `dsh-terminal-mcp replay FILE [--speed N] [--from-marker K]`: write a recording's output to stdout
 * as it was printed, pauses scaled by 1/N (capped at {@link MAX_PAUSE_SECONDS}), from the start or
 * from send K's marker on. Resolves with the exit status: 0, 1 (unreadable file or marker), 2 (usage).
 */
export async function runReplay(argv: readonly string[], io: ReplayIo = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  const request = parseReplayArgs(argv)
  if (typeof request === 'string') {
    io.stderr.write(`dsh-terminal replay: ${request} (usage: dsh-terminal replay FILE [--speed N] [--from-marker K])\n`)
    return 2
  }
  let events: readonly AsciicastEvent[]
  try {
    events = parseAsciicast(await readFile(request.file, 'utf8')).events
  } catch (error) {
    io.stderr.write(`dsh-terminal replay: cannot play ${request.file}: ${errorMessage(error)}\n`)
    return 1
  }
  const from = startIndex(events, request.fromMarker)
  if (typeof from === 'string') {
    io.stderr.write(`dsh-terminal replay: ${from}\n`)
    return 1
  }
  let previous = events[from]?.time ?? 0
  for (const event of events.slice(from)) {
    if (event.code !== 'o') continue
    if (request.speed > 0) {
      const pause = Math.min(event.time - previous, MAX_PAUSE_SECONDS) / request.speed
      if (pause > 0) await sleep(pause * 1000)
    }
    previous = event.time
    if (!io.stdout.write(event.data)) await new Promise((resolve) => io.stdout.once('drain', resolve))
  }
  return 0
}

/** The index of send `marker`'s start marker (0 without one); a message naming the sends there are when it is absent. */
function startIndex(events: readonly AsciicastEvent[], marker: number | undefined): number | string {
  if (marker === undefined) return 0
  const sends = recordedSends(events)
  const send = sends.find((candidate) => candidate.number === marker)
  if (!send) {
    const known = sends.length === 0 ? 'it has no send markers' : `its sends are ${sends[0]!.number}–${sends.at(-1)!.number}`
    return `the recording has no send ${marker}: ${known}`
  }
  return send.index
}
