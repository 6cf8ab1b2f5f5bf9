import type { ForegroundFacts, StdinWait, TerminalModes } from 'dsh-subprocess'
import { describe, expect, it } from 'vitest'
import { classifyInput, needsTerminalModes, ownsPrompt, type ScreenView } from '../src/input/input-state'

// The classifier over facts as each platform reports them: Linux proves stdin waits, macOS (the ps
// path) cannot, and the terminal's flags are present only when asked for.
const SHELL = 100
const CHILD = 200
const quiet: ScreenView = { promptKind: undefined, alternateScreen: false }

const wait: StdinWait = {
  pid: CHILD,
  tid: CHILD,
  started: '1',
  state: 'stdin-wait',
  syscall: 0,
  syscallName: 'read',
  fd: 0,
  voluntaryCtxtSwitches: 1,
  nonvoluntaryCtxtSwitches: 0,
}

/** Linux facts of a group: waiting when `reading`, with `modes` when they were read. */
function linux(options: { shell?: boolean; reading?: boolean; notReading?: boolean; modes?: TerminalModes; name?: string } = {}): ForegroundFacts {
  const pid = options.shell ? SHELL : CHILD
  const reading = options.reading ?? true
  const facts: ForegroundFacts = {
    sequence: 1,
    processGroupId: pid,
    isShellGroup: options.shell === true,
    stdinWaitProof: reading ? 'proven' : 'unproven',
    complete: true,
    waits: reading ? [{ ...wait, pid, tid: pid }] : [],
    threads: [],
    program: { pid, started: '1', role: 'leader', command: options.name ?? 'prog', argv0: options.name ?? 'prog', elapsedMs: 1500 },
  }
  return { ...facts, ...(options.notReading ? { notReadingProven: true } : {}), ...(options.modes ? { terminalModes: options.modes } : {}) }
}

/** macOS facts: the ps path names the program but proves nothing about waits. */
function mac(options: { shell?: boolean; modes?: TerminalModes; name?: string } = {}): ForegroundFacts {
  const pid = options.shell ? SHELL : CHILD
  return {
    sequence: 1,
    processGroupId: pid,
    isShellGroup: options.shell === true,
    stdinWaitProof: 'unprovable',
    complete: true,
    waits: [],
    threads: [],
    program: { pid, started: '1', role: 'leader', command: options.name ?? 'prog', elapsedMs: 3000 },
    ...(options.modes ? { terminalModes: options.modes } : {}),
  }
}

const LINE = { echo: true, canonical: true }
const SECRET = { echo: false, canonical: true }
const EDITOR = { echo: false, canonical: false }
const CBREAK = { echo: true, canonical: false }

describe('classifyInput', () => {
  it('the marker says prompt or continuation when the shell is in front (or nothing could be sampled)', () => {
    expect(classifyInput(linux({ shell: true }), { promptKind: 'prompt', alternateScreen: false })).toEqual({ kind: 'prompt' })
    expect(classifyInput(linux({ shell: true }), { promptKind: 'continuation', alternateScreen: false })).toEqual({ kind: 'continuation' })
    expect(classifyInput(undefined, { promptKind: 'prompt', alternateScreen: false })).toEqual({ kind: 'prompt' })
    // Another group in front although the prompt text is still the last thing printed: not the shell's prompt.
    expect(classifyInput(linux({ modes: LINE }), { promptKind: 'prompt', alternateScreen: false })).toMatchObject({ kind: 'program' })
  })

  it('nothing sampled and no marker: unknown', () => {
    expect(classifyInput(undefined, quiet)).toBeUndefined()
  })

  it('a proven wait is told apart by the terminal flags', () => {
    const program = { name: 'prog', pid: CHILD, elapsedMs: 1500 }
    expect(classifyInput(linux({ modes: SECRET }), quiet)).toEqual({ kind: 'password', program })
    expect(classifyInput(linux({ modes: LINE }), quiet)).toEqual({ kind: 'program', program })
    expect(classifyInput(linux({ modes: EDITOR, name: 'python3' }), quiet)).toEqual({ kind: 'program', program: { ...program, name: 'python3' } })
    expect(classifyInput(linux({ modes: CBREAK }), quiet)).toEqual({ kind: 'keys', alternateScreen: false, program })
    expect(classifyInput(linux({ modes: EDITOR, name: 'less' }), quiet)).toEqual({
      kind: 'keys',
      alternateScreen: false,
      program: { ...program, name: 'less' },
    })
    expect(classifyInput(linux({ modes: EDITOR }), { promptKind: undefined, alternateScreen: true })).toEqual({ kind: 'keys', alternateScreen: true, program })
    // Flags unreadable: a program reads, which kind cannot be told.
    expect(classifyInput(linux(), quiet)).toEqual({ kind: 'program', program })
  })

  it('raw mode with echo off: a REPL reads lines, a full-screen program keys, told by the screen and the name', () => {
    const alternate: ScreenView = { promptKind: undefined, alternateScreen: true }
    // Identical flags for all of these: only the alternate screen or the name tells them apart.
    for (const repl of ['python3', 'node', 'gdb', 'sqlite3']) {
      expect(classifyInput(linux({ modes: EDITOR, name: repl }), quiet)).toMatchObject({ kind: 'program', program: { name: repl } })
    }
    // A Python program drawing with curses switches screens: keys, although python3 is a REPL's name.
    expect(classifyInput(linux({ modes: EDITOR, name: 'python3' }), alternate)).toMatchObject({
      kind: 'keys',
      alternateScreen: true,
      program: { name: 'python3' },
    })
    // top never switches screens, vim under TERM=dumb cannot: known by name.
    for (const name of ['top', 'vim', 'nano', 'less', 'htop']) {
      expect(classifyInput(linux({ modes: EDITOR, name }), quiet)).toMatchObject({ kind: 'keys', alternateScreen: false, program: { name } })
    }
    // Started through an alternative (`editor`, `pager`): the executable's own name, without its variant.
    const viaEditor = linux({ modes: EDITOR, name: 'editor' })
    const basic = { ...viaEditor, program: { ...viaEditor.program!, command: 'vim.basic' } }
    expect(classifyInput(basic, quiet)).toMatchObject({ kind: 'keys', program: { name: 'editor' } })
    expect(classifyInput(linux({ modes: EDITOR, name: 'editor' }), quiet)).toMatchObject({ kind: 'program' })
    // A line read stays a line read on the alternate screen (vim's own `:!read` prompt, cooked).
    expect(classifyInput(linux({ modes: LINE, name: 'vim' }), alternate)).toMatchObject({ kind: 'program' })
    expect(classifyInput(linux({ modes: SECRET, name: 'vim' }), alternate)).toMatchObject({ kind: 'password' })
  })

  it('flags unreadable: the alternate screen or a key program says keys, anything else a program reading', () => {
    const alternate: ScreenView = { promptKind: undefined, alternateScreen: true }
    expect(classifyInput(linux({ name: 'prog' }), alternate)).toMatchObject({ kind: 'keys', alternateScreen: true })
    expect(classifyInput(linux({ name: 'less' }), quiet)).toMatchObject({ kind: 'keys', alternateScreen: false })
    expect(classifyInput(linux({ name: 'python3' }), quiet)).toMatchObject({ kind: 'program' })
    expect(classifyInput(linux({ shell: true, name: 'bash' }), alternate)).toMatchObject({ kind: 'program' })
  })

  it("the shell's own line editor with text typed after its prompt is still its prompt", () => {
    expect(classifyInput(linux({ shell: true, modes: EDITOR, name: 'bash' }), quiet)).toEqual({ kind: 'prompt' })
    // …but the shell reading a line itself (read -p) is a program, and read -s a password.
    expect(classifyInput(linux({ shell: true, modes: LINE, name: 'bash' }), quiet)).toMatchObject({ kind: 'program', program: { name: 'bash' } })
    expect(classifyInput(linux({ shell: true, modes: SECRET, name: 'bash' }), quiet)).toMatchObject({ kind: 'password' })
  })

  it('no proven wait: busy, not reading when proven so', () => {
    expect(classifyInput(linux({ reading: false, notReading: true, name: 'sleep' }), quiet)).toEqual({
      kind: 'busy',
      reading: 'no',
      program: { name: 'sleep', pid: CHILD, elapsedMs: 1500 },
    })
    expect(classifyInput(linux({ reading: false }), quiet)).toMatchObject({ kind: 'busy', reading: 'unproven' })
  })

  it('macOS (no stdin proofs): busy and unprovable, except flags that only a password read sets', () => {
    expect(classifyInput(mac({ name: 'python3' }), quiet)).toEqual({
      kind: 'busy',
      reading: 'unprovable',
      program: { name: 'python3', pid: CHILD, elapsedMs: 3000 },
    })
    expect(classifyInput(mac({ modes: EDITOR }), quiet)).toMatchObject({ kind: 'busy', reading: 'unprovable' })
    expect(classifyInput(mac({ modes: SECRET, name: 'sudo' }), quiet)).toMatchObject({ kind: 'password', program: { name: 'sudo' } })
    expect(classifyInput(mac({ shell: true }), { promptKind: 'prompt', alternateScreen: false })).toEqual({ kind: 'prompt' })
    // Nothing proves a full-screen program waits there either: the screen alone proves no read.
    expect(classifyInput(mac({ modes: EDITOR, name: 'vim' }), { promptKind: undefined, alternateScreen: true })).toMatchObject({
      kind: 'busy',
      reading: 'unprovable',
      program: { name: 'vim' },
    })
  })

  it('a program without a readable name is described without one', () => {
    const { program: _dropped, ...facts } = linux({ modes: LINE })
    expect(classifyInput(facts, quiet)).toEqual({ kind: 'program' })
  })
})

describe("a REPL's marked prompt", () => {
  const marked = (pid: number): ScreenView => ({ promptKind: 'repl', replPrompt: { pid, name: 'python3' }, alternateScreen: false })
  /** Python waiting in a sandbox: host pid CHILD, the pid it sees itself 7. */
  const sandboxed = (modes?: TerminalModes): ForegroundFacts => {
    const facts = linux({ name: 'python3', ...(modes ? { modes } : {}) })
    return { ...facts, program: { ...facts.program!, namespacePid: 7 } }
  }

  it('is owned by the process that printed it, by host pid or, in a sandbox, by the pid it sees itself', () => {
    expect(ownsPrompt(linux({ name: 'python3' }), marked(CHILD))).toBe(true)
    expect(ownsPrompt(sandboxed(), marked(7))).toBe(true)
    // Another process in front, or a sandboxed one whose own pid is not the marker's.
    expect(ownsPrompt(linux({ name: 'python3' }), marked(CHILD + 1))).toBe(false)
    expect(ownsPrompt(sandboxed(), marked(CHILD))).toBe(false)
    expect(ownsPrompt(sandboxed(), marked(8))).toBe(false)
  })

  it('tells the program with its host pid, also in a sandbox', () => {
    const program = { name: 'python3', pid: CHILD, elapsedMs: 1500 }
    expect(classifyInput(sandboxed(EDITOR), marked(7))).toEqual({ kind: 'program', program })
    // The marker already says what reads, so the flags need not be read.
    expect(needsTerminalModes(sandboxed(), marked(7))).toBe(false)
    expect(needsTerminalModes(sandboxed(), marked(8))).toBe(true)
  })
})

describe('needsTerminalModes', () => {
  it('only for a proven wait that is not the shell at its prompt, or where waits cannot be proven', () => {
    expect(needsTerminalModes(linux(), quiet)).toBe(true)
    expect(needsTerminalModes(linux({ modes: LINE }), quiet)).toBe(false)
    expect(needsTerminalModes(linux({ reading: false }), quiet)).toBe(false)
    expect(needsTerminalModes(linux({ shell: true }), { promptKind: 'prompt', alternateScreen: false })).toBe(false)
    expect(needsTerminalModes(mac(), quiet)).toBe(true)
    expect(needsTerminalModes(undefined, quiet)).toBe(false)
  })
})
