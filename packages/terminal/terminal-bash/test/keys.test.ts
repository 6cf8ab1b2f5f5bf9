import { TERMINAL_KEY_NAMES } from 'dsh-terminal'
import { describe, expect, it } from 'vitest'
import { encodeKey, encodeKeys } from '../src/input/keys'
import { DEFAULT_KEY_MODES, type KeyModes } from '../src/input/send-input'

// What xterm sends for each key name, in both cursor modes. The expected bytes were read back from
// tmux 3.3a (send-keys into a raw reader, with and without DECCKM) and match xterm-256color's
// terminfo (kcuu1=\EOA, khome=\EOH, kf5=\E[15~, kUP3=\E[1;3A, …); Home/End follow xterm, not tmux.
const ESC = '\x1b'
const NORMAL: KeyModes = DEFAULT_KEY_MODES
const APPLICATION: KeyModes = { ...DEFAULT_KEY_MODES, applicationCursorKeys: true }

/** Name → [normal cursor mode, application cursor mode]. */
const NAMED: Record<string, [string, string]> = {
  Enter: ['\r', '\r'],
  Tab: ['\t', '\t'],
  'S-Tab': [`${ESC}[Z`, `${ESC}[Z`],
  Escape: [ESC, ESC],
  Backspace: ['\x7f', '\x7f'],
  Delete: [`${ESC}[3~`, `${ESC}[3~`],
  Insert: [`${ESC}[2~`, `${ESC}[2~`],
  Up: [`${ESC}[A`, `${ESC}OA`],
  Down: [`${ESC}[B`, `${ESC}OB`],
  Right: [`${ESC}[C`, `${ESC}OC`],
  Left: [`${ESC}[D`, `${ESC}OD`],
  Home: [`${ESC}[H`, `${ESC}OH`],
  End: [`${ESC}[F`, `${ESC}OF`],
  PageUp: [`${ESC}[5~`, `${ESC}[5~`],
  PageDown: [`${ESC}[6~`, `${ESC}[6~`],
  Space: [' ', ' '],
  F1: [`${ESC}OP`, `${ESC}OP`],
  F2: [`${ESC}OQ`, `${ESC}OQ`],
  F3: [`${ESC}OR`, `${ESC}OR`],
  F4: [`${ESC}OS`, `${ESC}OS`],
  F5: [`${ESC}[15~`, `${ESC}[15~`],
  F6: [`${ESC}[17~`, `${ESC}[17~`],
  F7: [`${ESC}[18~`, `${ESC}[18~`],
  F8: [`${ESC}[19~`, `${ESC}[19~`],
  F9: [`${ESC}[20~`, `${ESC}[20~`],
  F10: [`${ESC}[21~`, `${ESC}[21~`],
  F11: [`${ESC}[23~`, `${ESC}[23~`],
  F12: [`${ESC}[24~`, `${ESC}[24~`],
}

describe('named keys', () => {
  it('the table covers the whole vocabulary', () => {
    expect(Object.keys(NAMED).sort()).toEqual([...TERMINAL_KEY_NAMES].sort())
  })

  for (const [name, [normal, application]] of Object.entries(NAMED)) {
    it(`${name} in normal and application cursor mode`, () => {
      expect(encodeKey(name, NORMAL)).toBe(normal)
      expect(encodeKey(name, APPLICATION)).toBe(application)
    })
  }

  it('keypad application mode changes no name (none is a keypad key)', () => {
    for (const name of TERMINAL_KEY_NAMES) {
      expect(encodeKey(name, { ...NORMAL, applicationKeypad: true })).toBe(encodeKey(name, NORMAL))
      expect(encodeKey(name, { ...APPLICATION, applicationKeypad: true })).toBe(encodeKey(name, APPLICATION))
    }
  })
})

describe('characters and Ctrl', () => {
  it('a single character presses itself, in any script', () => {
    for (const key of ['a', 'Z', '0', '~', '/', ':', '-', 'é', '日', '😀']) expect(encodeKey(key, NORMAL)).toBe(key)
  })

  it('C-<letter> is its control code, either case', () => {
    expect(encodeKey('C-a', NORMAL)).toBe('\x01')
    expect(encodeKey('C-A', NORMAL)).toBe('\x01')
    expect(encodeKey('C-c', NORMAL)).toBe('\x03')
    expect(encodeKey('C-r', NORMAL)).toBe('\x12')
    expect(encodeKey('C-z', NORMAL)).toBe('\x1a')
  })

  it('C- with @ [ \\ ] ^ _ ? and space', () => {
    expect(encodeKey('C-@', NORMAL)).toBe('\0')
    expect(encodeKey('C- ', NORMAL)).toBe('\0')
    expect(encodeKey('C-[', NORMAL)).toBe(ESC)
    expect(encodeKey('C-\\', NORMAL)).toBe('\x1c')
    expect(encodeKey('C-]', NORMAL)).toBe('\x1d')
    expect(encodeKey('C-^', NORMAL)).toBe('\x1e')
    expect(encodeKey('C-_', NORMAL)).toBe('\x1f')
    expect(encodeKey('C-?', NORMAL)).toBe('\x7f')
  })
})

describe('M- (Alt)', () => {
  it('ESC before a character, a control code or a key that sends fixed bytes', () => {
    expect(encodeKey('M-b', NORMAL)).toBe(`${ESC}b`)
    expect(encodeKey('M-F', NORMAL)).toBe(`${ESC}F`)
    expect(encodeKey('M-.', NORMAL)).toBe(`${ESC}.`)
    expect(encodeKey('M-C-a', NORMAL)).toBe(`${ESC}\x01`)
    expect(encodeKey('M-Enter', NORMAL)).toBe(`${ESC}\r`)
    expect(encodeKey('M-Escape', NORMAL)).toBe(`${ESC}${ESC}`)
    expect(encodeKey('M-Backspace', NORMAL)).toBe(`${ESC}\x7f`)
    expect(encodeKey('M-Tab', NORMAL)).toBe(`${ESC}\t`)
    expect(encodeKey('M-Space', NORMAL)).toBe(`${ESC} `)
    expect(encodeKey('M-S-Tab', NORMAL)).toBe(`${ESC}${ESC}[Z`)
  })

  it("xterm's Alt parameter on keys whose sequence takes one, in either cursor mode", () => {
    for (const modes of [NORMAL, APPLICATION]) {
      expect(encodeKey('M-Up', modes)).toBe(`${ESC}[1;3A`)
      expect(encodeKey('M-Down', modes)).toBe(`${ESC}[1;3B`)
      expect(encodeKey('M-Right', modes)).toBe(`${ESC}[1;3C`)
      expect(encodeKey('M-Left', modes)).toBe(`${ESC}[1;3D`)
      expect(encodeKey('M-Home', modes)).toBe(`${ESC}[1;3H`)
      expect(encodeKey('M-End', modes)).toBe(`${ESC}[1;3F`)
      expect(encodeKey('M-F1', modes)).toBe(`${ESC}[1;3P`)
      expect(encodeKey('M-F4', modes)).toBe(`${ESC}[1;3S`)
      expect(encodeKey('M-F5', modes)).toBe(`${ESC}[15;3~`)
      expect(encodeKey('M-F12', modes)).toBe(`${ESC}[24;3~`)
      expect(encodeKey('M-Insert', modes)).toBe(`${ESC}[2;3~`)
      expect(encodeKey('M-Delete', modes)).toBe(`${ESC}[3;3~`)
      expect(encodeKey('M-PageUp', modes)).toBe(`${ESC}[5;3~`)
      expect(encodeKey('M-PageDown', modes)).toBe(`${ESC}[6;3~`)
    }
  })
})

describe('key lists', () => {
  it('presses every key in order', () => {
    expect(encodeKeys(['Escape', ':', 'w', 'q', 'Enter'], NORMAL)).toBe(`${ESC}:wq\r`)
    expect(encodeKeys(['Down', 'Down', 'Enter'], APPLICATION)).toBe(`${ESC}OB${ESC}OB\r`)
  })
})
