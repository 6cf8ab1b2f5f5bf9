import { eventually } from 'dsh-testkit'
import { describe, expect, it } from 'vitest'
import { ACK_DELAY_MS, OutputDelivery } from '../src/output-delivery'

// Acks by offset: at once at `ackEveryBytes`, else within ACK_DELAY_MS, so a round trip of a few
// bytes costs the session host no wakeup of its own while the window stays far away.
describe('OutputDelivery acks', () => {
  it('a few delivered bytes are acknowledged later, once, not on the next turn', async () => {
    const acks: number[] = []
    const delivery = new OutputDelivery({ acknowledge: (offset) => acks.push(offset), ackEveryBytes: 1000, report: () => {} })
    delivery.subscribe(() => {})
    delivery.push(0, Buffer.from('dsh> '))
    delivery.push(5, Buffer.from('true'))
    await new Promise((resolve) => setImmediate(resolve))
    expect(acks).toEqual([])
    await eventually(() => acks.length > 0, `an ack within about ${ACK_DELAY_MS} ms`)
    expect(acks).toEqual([9])
  })

  it('delivered bytes reaching ackEveryBytes are acknowledged at once', () => {
    const acks: number[] = []
    const delivery = new OutputDelivery({ acknowledge: (offset) => acks.push(offset), ackEveryBytes: 8, report: () => {} })
    delivery.subscribe(() => {})
    delivery.push(0, Buffer.from('1234'))
    expect(acks).toEqual([])
    delivery.push(4, Buffer.from('5678'))
    expect(acks).toEqual([8])
  })
})
