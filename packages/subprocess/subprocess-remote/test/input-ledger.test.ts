import { describe, expect, it } from 'vitest'
import { INPUT_RETAIN_BYTES, InputLedger } from '../src/input-ledger'

const bytes = (text: string) => Buffer.from(text, 'latin1')

describe('InputLedger', () => {
  it('resends exactly what the far side did not take, once, and counts on from there', () => {
    const ledger = new InputLedger(0)
    ledger.record(bytes('echo one\r'))
    ledger.record(bytes('echo two\r'))
    expect(ledger.sent).toBe(18)
    const gap = ledger.reconcile(9)
    expect(gap).toEqual({ kind: 'resend', bytes: bytes('echo two\r') })
    // The caller sends the gap again (recorded as sent), then the far side has everything.
    if (gap.kind === 'resend') ledger.record(gap.bytes)
    expect(ledger.sent).toBe(18)
    expect(ledger.reconcile(18)).toEqual({ kind: 'none' })
  })

  it('a gap inside one recorded write resends its tail only', () => {
    const ledger = new InputLedger(100)
    ledger.record(bytes('abcdef'))
    expect(ledger.reconcile(103)).toEqual({ kind: 'resend', bytes: bytes('def') })
  })

  it('nothing lost, or more taken than sent (another client wrote): nothing to resend, the count moves up', () => {
    const ledger = new InputLedger(0)
    ledger.record(bytes('x'))
    expect(ledger.reconcile(1)).toEqual({ kind: 'none' })
    ledger.record(bytes('y'))
    expect(ledger.reconcile(50)).toEqual({ kind: 'none' })
    expect(ledger.sent).toBe(50)
  })

  it('keeps the newest INPUT_RETAIN_BYTES; a gap older than that is reported lost, and nothing is resent', () => {
    const ledger = new InputLedger(0)
    const piece = Buffer.alloc(4096, 0x61)
    for (let index = 0; index < (INPUT_RETAIN_BYTES / 4096) * 2; index++) ledger.record(piece)
    const sent = ledger.sent
    // The newest INPUT_RETAIN_BYTES can still be resent.
    const recent = ledger.reconcile(sent - INPUT_RETAIN_BYTES)
    expect(recent.kind === 'resend' && recent.bytes.length).toBe(INPUT_RETAIN_BYTES)
    if (recent.kind === 'resend') ledger.record(recent.bytes)
    for (let index = 0; index < (INPUT_RETAIN_BYTES / 4096) * 2; index++) ledger.record(piece)
    expect(ledger.reconcile(sent)).toEqual({ kind: 'lost', lostBytes: INPUT_RETAIN_BYTES * 2 })
  })
})
