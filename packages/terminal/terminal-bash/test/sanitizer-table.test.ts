import { describe, expect, it } from 'vitest'
import { BYTE_CLASS_COUNT, BYTE_CLASSES, ByteClass } from '../src/output/byte-classes'
import {
  ACTION_SHIFT,
  Action,
  CSI_DIGIT_SPAN,
  GROUND_LEAD_SPAN,
  GROUND_TEXT_SPAN,
  PRINT_IN_GROUND,
  ROW_SHIFT,
  STATE_MASK,
  State,
  TRANSITIONS,
} from '../src/output/sanitizer-table'

const states = Object.values(State)
const actions = Object.values(Action)
const entry = (state: number, byte: number) => TRANSITIONS[(state << ROW_SHIFT) | byte] as number

describe('sanitizer tables', () => {
  it('gives every byte one class, and every state an action and a next state for every byte', () => {
    for (let byte = 0; byte < 256; byte++) expect(BYTE_CLASSES[byte]).toBeLessThan(BYTE_CLASS_COUNT)
    for (const byteClass of Object.values(ByteClass)) expect(BYTE_CLASSES).toContain(byteClass)
    for (const state of states) {
      for (let byte = 0; byte < 256; byte++) {
        expect(actions).toContain(entry(state, byte) >> ACTION_SHIFT)
        expect(states).toContain(entry(state, byte) & STATE_MASK)
      }
    }
  })

  it('gives bytes of one class the same entry in every state', () => {
    for (const state of states) {
      const byClass = new Map<number, number>()
      for (let byte = 0; byte < 256; byte++) {
        const byteClass = BYTE_CLASSES[byte] as number
        expect(byClass.get(byteClass) ?? entry(state, byte)).toBe(entry(state, byte))
        byClass.set(byteClass, entry(state, byte))
      }
    }
  })

  it('reads the fast paths’ spans off the table: printable ASCII and UTF-8 leads in ground, digits in CSI parameters', () => {
    expect(GROUND_TEXT_SPAN).toEqual({ first: 0x20, last: 0x7e })
    expect(CSI_DIGIT_SPAN).toEqual({ first: 0x30, last: 0x39 })
    const printing = Array.from({ length: 256 }, (_, byte) => byte).filter((byte) => entry(State.Ground, byte) === PRINT_IN_GROUND)
    expect(printing).toEqual([0x09, ...Array.from({ length: 0x7f - 0x20 }, (_, offset) => 0x20 + offset)])
    // The text run takes a UTF-8 sequence only when its lead byte is in the span: the span must hold
    // every lead byte, or one outside it would go back and forth between the run and the loop.
    expect(GROUND_LEAD_SPAN).toEqual({ first: 0xc2, last: 0xf4 })
    const leadInGround = (Action.Utf8Lead << ACTION_SHIFT) | State.Ground
    const leads = Array.from({ length: 256 }, (_, byte) => byte).filter((byte) => entry(State.Ground, byte) === leadInGround)
    expect(leads).toEqual(Array.from({ length: 0xf5 - 0xc2 }, (_, offset) => 0xc2 + offset))
    // The parameters' fast path also runs right after `ESC [`, so both states must read digits and separators alike.
    for (const byte of [0x30, 0x39, 0x3a, 0x3b]) expect(entry(State.CsiEntry, byte)).toBe(entry(State.CsiParameters, byte))
  })

  it('aborts every sequence and string on CAN and SUB, and reads a high byte after ESC as in ground', () => {
    for (const state of states.filter((state) => state !== State.Utf8)) {
      expect(entry(state, 0x18) & STATE_MASK).toBe(State.Ground)
      expect(entry(state, 0x1a) & STATE_MASK).toBe(State.Ground)
    }
    for (const state of [State.Escape, State.EscapeIntermediate, State.CsiEntry, State.CsiParameters, State.CsiIgnore]) {
      for (let byte = 0x80; byte < 0x100; byte++) expect(entry(state, byte)).toBe(entry(State.Ground, byte))
    }
  })
})
