import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { eventLine, headerLine } from '../src/asciicast'
import { parseAsciicast, recordedSends } from '../src/index'
import { REDACTED, StreamRedactor } from '../src/redaction'
import { WriterThread } from '../src/writer-thread'
import { scratchDir } from './stack'

describe('the redactor of a chunked stream', () => {
  it('replaces a secret split over any chunk boundary, and holds back only what could begin one', () => {
    const secret = 'sk-live-0123456789'
    const stream = `before ${secret} middle s${secret}k after s`
    for (let cut = 1; cut < stream.length; cut++) {
      for (const width of [1, 3, 7]) {
        const redactor = new StreamRedactor([secret])
        const out: Buffer[] = []
        const bytes = Buffer.from(stream)
        out.push(Buffer.from(redactor.push(bytes.subarray(0, cut))))
        for (let at = cut; at < bytes.length; at += width) out.push(Buffer.from(redactor.push(bytes.subarray(at, at + width))))
        out.push(Buffer.from(redactor.flush()))
        expect(Buffer.concat(out).toString()).toBe(`before ${REDACTED} middle s${REDACTED}k after s`)
      }
    }
  })

  it('hands chunks through untouched when there is nothing to hunt for', () => {
    const redactor = new StreamRedactor([])
    const chunk = Buffer.from('plain')
    expect(redactor.push(chunk)).toBe(chunk)
    expect(redactor.redactText('plain')).toBe('plain')
  })
})

describe('reading a recording', () => {
  it('reads what the recorder writes, skips a torn last line, and pairs send markers with their ends', () => {
    const text =
      headerLine({ version: 2, width: 80, height: 24, timestamp: 1, env: { TERM: 'xterm-256color' } }) +
      eventLine(0.1, 'm', 'send 1 (call mcp-7)') +
      eventLine(0.2, 'o', 'a "quoted"\r\n\u001b[0m') +
      eventLine(0.3, 'm', 'send 1 done (call mcp-7): stdin_read, exit 0') +
      eventLine(0.4, 'm', 'send 2') +
      '[0.5, "o", "tor'
    const cast = parseAsciicast(text)
    expect(cast.skippedLines).toBe(1)
    expect(cast.events[1]).toEqual({ time: 0.2, code: 'o', data: 'a "quoted"\r\n\u001b[0m' })
    expect(recordedSends(cast.events)).toEqual([
      { number: 1, time: 0.1, index: 0, callId: 'mcp-7', outcome: 'stdin_read, exit 0' },
      { number: 2, time: 0.4, index: 3 },
    ])
    expect(() => parseAsciicast('{"version": 1}\n')).toThrow(expect.objectContaining({ code: 'NOT_ASCIICAST' }))
  })
})

describe('the writer thread', () => {
  it('writes output bytes as JSON strings that decode to the same text, whatever the chunking, and U+FFFD for bytes that are not UTF-8', async () => {
    const { dir, remove } = await scratchDir('dsh-rec-writer-')
    const writer = new WriterThread()
    try {
      const text = 'plain "quoted" back\\slash\ttab\r\n\u001b[1mbold\u001b[0m é ✓ 𝄞 \u0000\u007f end'
      const bytes = Buffer.from(text)
      const path = join(dir, 'one.cast')
      const errors: string[] = []
      const channel = writer.open(
        { path, header: headerLine({ version: 2, width: 80, height: 24, timestamp: 1 }), maxBytes: 1 << 20, reserve: 512 },
        {
          onStopped: () => errors.push('stopped'),
          onError: (message) => errors.push(message),
        },
      )
      // One byte at a time: every multi-byte character is split across chunks.
      for (let at = 0; at < bytes.length; at++) channel.output(at / 1000, bytes.subarray(at, at + 1))
      channel.output(1, Buffer.from([0x41, 0xff, 0x42, 0xe2, 0x9c]))
      await channel.close(2)
      const cast = parseAsciicast(await readFile(path, 'utf8'))
      expect(errors).toEqual([])
      expect(cast.skippedLines).toBe(0)
      expect(cast.events.map((event) => event.data).join('')).toBe(`${text}A\ufffdB\ufffd`)
    } finally {
      await writer.dispose()
      await remove()
    }
  })
})
