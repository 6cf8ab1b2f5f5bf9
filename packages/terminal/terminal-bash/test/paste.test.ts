import { describe, expect, it } from 'vitest'
import { bracketPaste, PASTE_END, PASTE_START, pastesText } from '../src/input/paste'
import { DEFAULT_KEY_MODES, type KeyModes, sendInput } from '../src/input/send-input'

// What one send writes: keys encoded, text typed, and multi-line text a program asked to receive as
// a paste wrapped once, with nothing inside able to end the paste early.
const PLAIN: KeyModes = DEFAULT_KEY_MODES
const PASTING: KeyModes = { ...DEFAULT_KEY_MODES, bracketedPaste: true }
const BLOCK = 'def f():\n    a = 1\n\n    return a + 1\n\nprint("result", f())'
const pasted = (content: string) => `${PASTE_START}${content}${PASTE_END}`

describe('when text is pasted', () => {
  it('an indented block with blank lines, into a program that asked for pastes', () => {
    expect(pastesText(BLOCK, true)).toBe(true)
    expect(pastesText(BLOCK, false)).toBe(false)
  })

  it('a tab anywhere in multi-line text (typed, readline would complete on it)', () => {
    expect(pastesText('printf "a\\tb"\necho\tdone', true)).toBe(true)
    expect(pastesText('cat <<EOF\n\tindented by tab\nEOF', true)).toBe(true)
  })

  it('\\r and \\r\\n count as line breaks like \\n', () => {
    expect(pastesText('if x:\r    y()', true)).toBe(true)
    expect(pastesText('if x:\r\n    y()\r\n', true)).toBe(true)
  })

  it('not plain lines: typing each works everywhere, and some programs take a paste as one line', () => {
    expect(pastesText('echo one\necho two\n', true)).toBe(false)
    expect(pastesText('print 1\nprint 2', true)).toBe(false)
    expect(pastesText('x = 1\n\nprint(x)', true)).toBe(false)
  })

  it('not one line, even indented or with a tab, nor one line with its final Enter', () => {
    expect(pastesText('    echo indented', true)).toBe(false)
    expect(pastesText('echo\ttab', true)).toBe(false)
    expect(pastesText('    echo indented\n', true)).toBe(false)
    expect(pastesText('    echo indented\r\n', true)).toBe(false)
    expect(pastesText('', true)).toBe(false)
  })
})

describe('the paste itself', () => {
  it('line breaks become \\r, as a terminal pastes them', () => {
    expect(bracketPaste('a\n  b\r\n  c\rd', false)).toBe(pasted('a\r  b\r  c\rd'))
  })

  it('ends with a line break when Enter follows, once', () => {
    expect(bracketPaste('a\n  b', true)).toBe(pasted('a\r  b\r'))
    expect(bracketPaste('a\n  b\n', true)).toBe(pasted('a\r  b\r'))
    expect(bracketPaste('a\n  b\n', false)).toBe(pasted('a\r  b\r'))
    expect(bracketPaste('a\n  b\n\n', true)).toBe(pasted('a\r  b\r'))
  })

  it('a paste end inside the text cannot end the paste: every marker is removed', () => {
    const payload = `x\n  ${PASTE_END}rm -rf /tmp/victim\n`
    expect(bracketPaste(payload, false)).toBe(pasted('x\r  rm -rf /tmp/victim\r'))
    expect(bracketPaste(`a\n  ${PASTE_START}b${PASTE_END}`, false)).toBe(pasted('a\r  b'))
  })

  it('removing one marker cannot join the pieces around it into another', () => {
    const nested = `a\n  \x1b[20${PASTE_END}1~ b \x1b[${PASTE_START}201~ c`
    const written = bracketPaste(nested, false)
    expect(written.slice(PASTE_START.length, -PASTE_END.length)).not.toContain(PASTE_END)
    expect(written.slice(PASTE_START.length, -PASTE_END.length)).not.toContain(PASTE_START)
    expect(written).toBe(pasted('a\r   b  c'))
  })
})

describe('sendInput', () => {
  it('writes nothing for an empty text without submit', () => {
    expect(sendInput({ text: '', submit: false }, PASTING)).toBeUndefined()
  })

  it('types text as it is, then Enter when submit', () => {
    expect(sendInput({ text: 'echo hi', submit: true }, PASTING)).toBe('echo hi\r')
    expect(sendInput({ text: '', submit: true }, PASTING)).toBe('\r')
    expect(sendInput({ text: 'echo one\necho two', submit: true }, PASTING)).toBe('echo one\necho two\r')
    expect(sendInput({ text: '\x03', submit: false }, PASTING)).toBe('\x03')
  })

  it('types an indented block as today when the program did not ask for pastes', () => {
    expect(sendInput({ text: BLOCK, submit: true }, PLAIN)).toBe(`${BLOCK}\r`)
    expect(sendInput({ text: BLOCK, submit: false }, PLAIN)).toBe(BLOCK)
  })

  it('pastes the block, then one Enter that runs it, when submit', () => {
    const content = 'def f():\r    a = 1\r\r    return a + 1\r\rprint("result", f())\r'
    expect(sendInput({ text: BLOCK, submit: true }, PASTING)).toBe(`${pasted(content)}\r`)
  })

  it('pastes without Enter when the text neither ends with a line break nor submits', () => {
    expect(sendInput({ text: 'for i in x:\n    f(i)', submit: false }, PASTING)).toBe(pasted('for i in x:\r    f(i)'))
  })

  it('into an editor on the alternate screen, the text keeps its own line breaks and gets no extra Enter', () => {
    expect(sendInput({ text: 'one\ttwo\nthree\n', submit: true }, PASTING, true)).toBe(pasted('one\ttwo\rthree\r'))
    expect(sendInput({ text: 'one\ttwo\nthree\n', submit: false }, PASTING, true)).toBe(pasted('one\ttwo\rthree\r'))
    // Without a final line break, submit is the one Enter after the paste.
    expect(sendInput({ text: 'one\ttwo\nthree', submit: true }, PASTING, true)).toBe(`${pasted('one\ttwo\rthree')}\r`)
    expect(sendInput({ text: 'one\ttwo\nthree', submit: false }, PASTING, true)).toBe(pasted('one\ttwo\rthree'))
  })

  it("a text's final line break is its Enter, as when typed", () => {
    expect(sendInput({ text: 'for i in x:\n    f(i)\n', submit: false }, PASTING)).toBe(`${pasted('for i in x:\r    f(i)\r')}\r`)
    expect(sendInput({ text: 'for i in x:\n    f(i)\n', submit: true }, PASTING)).toBe(`${pasted('for i in x:\r    f(i)\r')}\r`)
  })

  it('what it wrote for a paste, sent again as text, writes the same bytes (a fixed point)', () => {
    const once = sendInput({ text: BLOCK, submit: true }, PASTING) as string
    expect(sendInput({ text: once, submit: false }, PASTING)).toBe(once)
    expect(sendInput({ text: once, submit: false }, PLAIN)).toBe(once)
  })

  it('encodes keys for the modes, ignoring the (empty) text', () => {
    expect(sendInput({ kind: 'keys', keys: ['Up', 'Enter'] }, PLAIN)).toBe('\x1b[A\r')
    expect(sendInput({ kind: 'keys', keys: ['Up', 'Enter'] }, { ...PLAIN, applicationCursorKeys: true })).toBe('\x1bOA\r')
    expect(sendInput({ kind: 'keys', keys: ['C-r'] }, PASTING)).toBe('\x12')
  })
  it('reads live modes only when the bytes depend on them: keys, or text a paste would change', () => {
    let reads = 0
    const live = () => {
      reads++
      return PASTING
    }
    expect(sendInput({ text: 'echo hi', submit: true }, live)).toBe('echo hi\r')
    expect(sendInput({ text: 'echo one\necho two', submit: true }, live)).toBe('echo one\necho two\r')
    expect(reads).toBe(0)
    expect(sendInput({ kind: 'keys', keys: ['Up'] }, live)).toBe('\x1b[A')
    expect(sendInput({ text: BLOCK, submit: true }, live)).toBe(sendInput({ text: BLOCK, submit: true }, PASTING))
    expect(reads).toBe(2)
  })
})
