import type { Readable } from 'node:stream'

/**
 * The stdio handoff (PROTOCOL.md, "Transports"): before any frame, a `--stdio` relay offers the
 * socket session host its own stdin and stdout, so the session host reads and writes the link's pipes
 * itself and no process copies bytes in between. The offer is one text line; the answer is one line.
 */

/** Version of the handoff lines (independent of the frame protocol's version). */
export const HANDOFF_VERSION = 1

/**
 * First word of an offer. Its first byte ('D', 0x44) can never start a frame: as a length's high
 * byte it would mean at least 1 140 850 688 bytes, far above MAX_FRAME_BYTES.
 */
export const HANDOFF_OFFER_WORD = 'DSH-STDIO-HANDOFF'

/** Longest offer or answer line a peer reads before giving up on it (bytes, newline included). */
export const MAX_HANDOFF_LINE_BYTES = 256

/** The answer that says the session host now holds the relay's stdin and stdout. */
export const HANDOFF_TAKEN = 'taken'

/** The answer that says it does not (with a reason): the relay copies bytes, frames follow on the socket. */
export const HANDOFF_DECLINED = 'relay'

/** True when a connection's first byte is an offer's, not a frame's. */
export function startsHandoffOffer(firstByte: number): boolean {
  return firstByte === HANDOFF_OFFER_WORD.charCodeAt(0)
}

/** The offer line of a relay whose pid is `pid`: `DSH-STDIO-HANDOFF 1 <pid>\n`. */
export function encodeHandoffOffer(pid: number): Buffer {
  return Buffer.from(`${HANDOFF_OFFER_WORD} ${HANDOFF_VERSION} ${pid}\n`, 'latin1')
}

/** The relay's pid from an offer line (without its newline), or a reason it is not a valid offer. */
export function parseHandoffOffer(line: string): { readonly pid: number } | { readonly invalid: string } {
  const match = /^DSH-STDIO-HANDOFF (\d{1,9}) ([1-9]\d{0,9})$/.exec(line)
  if (!match) return { invalid: `not a handoff offer: ${JSON.stringify(line.slice(0, 64))}` }
  if (Number(match[1]) !== HANDOFF_VERSION) return { invalid: `handoff version ${match[1]} is not ${HANDOFF_VERSION}` }
  const pid = Number(match[2])
  if (!Number.isSafeInteger(pid) || pid > 0x3fffffff) return { invalid: `pid ${match[2]} is out of range` }
  return { pid }
}

/** The answer line: taken, or declined with a reason (one line, control characters removed). */
export function encodeHandoffAnswer(answer: { readonly taken: true } | { readonly declined: string }): Buffer {
  if ('taken' in answer) return Buffer.from(`${HANDOFF_TAKEN}\n`, 'latin1')
  const reason = answer.declined.replace(/[\x00-\x1f\x7f]+/g, ' ').slice(0, MAX_HANDOFF_LINE_BYTES - HANDOFF_DECLINED.length - 2)
  return Buffer.from(`${HANDOFF_DECLINED} ${reason}\n`, 'utf8')
}

/** What {@link readHandoffLine} found at the start of a stream. */
export type HandoffLineRead =
  | { readonly kind: 'line'; readonly line: string }
  | { readonly kind: 'frames' }
  | { readonly kind: 'failed'; readonly reason: string }

/**
 * Read one handoff line from the start of `stream`, unless its first byte says it is not one
 * (`isLineStart`): then `frames`, and every byte read is given back. Bytes after the line's newline
 * are given back too, so the frames that follow reach whoever reads the stream next. The stream is
 * left paused. A line longer than {@link MAX_HANDOFF_LINE_BYTES}, the stream's end or `deadlineMs`
 * of silence is `failed`.
 */
export function readHandoffLine(stream: Readable, isLineStart: (firstByte: number) => boolean, deadlineMs: number): Promise<HandoffLineRead> {
  return new Promise((resolve) => {
    let held: Buffer = Buffer.alloc(0)
    const finish = (read: HandoffLineRead, rest?: Buffer) => {
      clearTimeout(timer)
      stream.off('data', onData)
      stream.off('end', onEnd)
      stream.off('close', onEnd)
      stream.off('error', onEnd)
      stream.pause()
      if (rest && rest.length > 0) stream.unshift(rest)
      resolve(read)
    }
    const onData = (chunk: Buffer) => {
      held = held.length === 0 ? chunk : Buffer.concat([held, chunk])
      if (!isLineStart(held[0]!)) return finish({ kind: 'frames' }, held)
      const newline = held.indexOf(0x0a)
      if (newline === -1) {
        if (held.length >= MAX_HANDOFF_LINE_BYTES) finish({ kind: 'failed', reason: `a handoff line longer than ${MAX_HANDOFF_LINE_BYTES} bytes` })
        return
      }
      if (newline >= MAX_HANDOFF_LINE_BYTES) return finish({ kind: 'failed', reason: `a handoff line longer than ${MAX_HANDOFF_LINE_BYTES} bytes` })
      finish({ kind: 'line', line: held.subarray(0, newline).toString('utf8') }, held.subarray(newline + 1))
    }
    const onEnd = () => finish({ kind: 'failed', reason: 'the connection ended before its first line' })
    const timer = setTimeout(() => finish({ kind: 'failed', reason: `no first line within ${deadlineMs} ms` }), deadlineMs)
    timer.unref()
    stream.on('data', onData)
    stream.once('end', onEnd)
    stream.once('close', onEnd)
    stream.once('error', onEnd)
  })
}
