import {
  canProveStdinWait,
  type ForegroundFacts,
  type ForegroundProgram,
  type InspectOptions,
  isStdinWaitProven,
  isStdinWaitProvenOrUnprovable,
} from 'dsh-subprocess'
import type { TerminalInputState, TerminalProgram } from 'dsh-terminal'

/** What the byte stream says about the screen, next to the foreground facts. */
export interface ScreenView {
  /** Which prompt the cursor sits right after (its marker is this session's), if any. */
  readonly promptKind: 'prompt' | 'continuation' | 'repl' | undefined
  /** The REPL that printed the marked prompt, when `promptKind` is `repl`. */
  readonly replPrompt?: { readonly pid: number; readonly name: string } | undefined
  /** A program switched to the alternate screen and has not switched back. */
  readonly alternateScreen: boolean
}

/**
 * The input state a marked prompt says with no new inspection: the shell's prompt or continuation,
 * or a REPL (Python) at its prompt. A REPL's marker names it by the pid it sees itself (in a
 * sandbox, a namespace pid), so it is told only when `known`, the program in front at an earlier
 * sample, is the process that printed it; then with the host's pid. `undefined` otherwise.
 */
export function markedInput(screen: ScreenView, known?: ForegroundProgram): TerminalInputState | undefined {
  if (screen.promptKind === 'repl') {
    const repl = screen.replPrompt
    if (!repl || !known || !isMarkingProcess(known, repl.pid)) return undefined
    return { kind: 'program', program: { name: repl.name, pid: known.pid } }
  }
  return screen.promptKind ? { kind: screen.promptKind } : undefined
}

/**
 * Programs that read single keys although they may run without the alternate screen (under
 * `TERM=dumb`, asked not to switch, or never switching, like procps `top`): their raw mode looks
 * exactly like a line editor's. Matched against the name the program was started as and the
 * kernel's name for its executable, without a `.variant` suffix (`vim.basic` behind `editor`).
 */
const KEY_PROGRAMS: ReadonlySet<string> = new Set([
  'vi',
  'vim',
  'nvim',
  'view',
  'vimdiff',
  'nano',
  'pico',
  'emacs',
  'micro',
  'joe',
  'jed',
  'mcedit',
  'less',
  'more',
  'most',
  'man',
  'top',
  'htop',
  'btop',
  'atop',
  'iotop',
  'iftop',
  'nethogs',
  'ncdu',
  'watch',
  'mc',
  'tig',
  'lazygit',
  'fzf',
  'nnn',
  'ranger',
  'mutt',
  'neomutt',
  'w3m',
  'lynx',
  'dialog',
  'whiptail',
  'tmux',
  'screen',
])

/**
 * Whether a program reading raw input with echo off reads keys rather than lines: it switched to
 * the alternate screen (only full-screen programs do; a REPL's line editor never does), or it is
 * known by name to read keys. The flags alone cannot tell: both run non-canonical with echo off.
 */
function readsKeys(program: ForegroundProgram | undefined, screen: ScreenView): boolean {
  if (screen.alternateScreen) return true
  if (!program) return false
  return [program.argv0, program.command].some((name) => name !== undefined && KEY_PROGRAMS.has(withoutVariant(name)))
}

/** `vim.basic` → `vim`; a name without a dot stays as it is. */
function withoutVariant(name: string): string {
  const dot = name.indexOf('.')
  return dot > 0 ? name.slice(0, dot) : name
}

/**
 * What the terminal waits for, from one foreground sample and the screen. The shell's own marker
 * makes `prompt` and `continuation` exact. Otherwise a proven stdin wait is told apart by the
 * terminal's flags: line mode without echo is a password read; line mode with echo a line reader
 * (`read -p`, a `[y/N]` question); raw mode is either a line editor (readline in python, gdb, node,
 * bash itself: echo off) or a key reader (`read -n1` leaves echo on; an editor or pager takes the
 * alternate screen or is known by name, see {@link readsKeys}). Without a proven wait the program
 * is `busy`.
 * `undefined` when nothing could be sampled.
 */
export function classifyInput(facts: ForegroundFacts | undefined, screen: ScreenView): TerminalInputState | undefined {
  if (screen.promptKind && (facts === undefined || ownsPrompt(facts, screen))) {
    const marked = markedInput(screen, facts?.program)
    return marked?.kind === 'program' ? withProgram(marked, describeProgram(facts?.program)) : marked
  }
  if (facts === undefined) return undefined
  const program = describeProgram(facts.program)
  const modes = facts.terminalModes
  if (!canProveStdinWait(facts)) {
    // Nothing can be proven here (macOS): only flags that no program leaves set by accident count.
    if (modes?.canonical && !modes.echo) return withProgram({ kind: 'password' }, program)
    return withProgram({ kind: 'busy', reading: 'unprovable' }, program)
  }
  if (!isStdinWaitProven(facts)) return withProgram({ kind: 'busy', reading: facts.notReadingProven ? 'no' : 'unproven' }, program)
  const keys = withProgram({ kind: 'keys', alternateScreen: screen.alternateScreen }, program)
  // Flags unreadable: only the screen or the name can say keys; otherwise some program reads.
  if (!modes) return readsKeys(facts.program, screen) && !facts.isShellGroup ? keys : withProgram({ kind: 'program' }, program)
  if (modes.canonical) return withProgram({ kind: modes.echo ? 'program' : 'password' }, program)
  if (screen.alternateScreen) return keys
  // The shell's own line editor with something typed after its prompt: still the shell's prompt.
  if (facts.isShellGroup && !modes.echo) return { kind: 'prompt' }
  // Echo left on in raw mode is a key read (`read -n1`); a line editor turns echo off.
  if (modes.echo || readsKeys(facts.program, screen)) return keys
  return withProgram({ kind: 'program' }, program)
}

/**
 * The state while a send's input has not been taken up (see `SendOperation.inputPending`): busy,
 * whatever the program in front did before the input reached it. A shell still sampled in its read,
 * or a prompt printed before the write, would otherwise say it waits for input it already has.
 */
export function inputNotTakenUp(facts: ForegroundFacts | undefined): TerminalInputState | undefined {
  if (facts === undefined) return undefined
  return withProgram({ kind: 'busy', reading: facts.notReadingProven ? 'no' : 'unproven' }, describeProgram(facts.program))
}

/** The model-facing name, pid and age of the program in front. */
export function describeProgram(program: ForegroundProgram | undefined): TerminalProgram | undefined {
  if (!program) return undefined
  const name = program.argv0 || program.command
  return program.elapsedMs === undefined ? { name, pid: program.pid } : { name, pid: program.pid, elapsedMs: program.elapsedMs }
}

function withProgram<S extends TerminalInputState>(state: S, program: TerminalProgram | undefined): S {
  return program ? { ...state, program } : state
}

/**
 * Tell the input state by looking: `known` (a sample already in hand) or one inspection, then a
 * second with the terminal's flags only when {@link needsTerminalModes} says so. `wanted` is asked
 * between the two; when it says no, nothing more is inspected and the answer is `undefined`.
 */
export async function lookAtInput(
  inspect: (options?: InspectOptions) => Promise<ForegroundFacts | undefined>,
  screen: ScreenView,
  options: { readonly known?: ForegroundFacts | undefined; readonly wanted?: () => boolean; readonly inputPending?: boolean } = {},
): Promise<TerminalInputState | undefined> {
  let facts = options.known ?? (await inspect())
  if (options.wanted && !options.wanted()) return undefined
  if (options.inputPending) return inputNotTakenUp(facts)
  if (needsTerminalModes(facts, screen)) facts = (await inspect({ terminalModes: true })) ?? facts
  return classifyInput(facts, screen)
}

/**
 * Whether describing `facts` needs the terminal's flags: only a proven stdin wait that is not the
 * shell at its own prompt (reading them costs a helper round trip), or on a platform that cannot
 * prove waits at all, where the flags are the only hint.
 */
export function needsTerminalModes(facts: ForegroundFacts | undefined, screen: ScreenView): boolean {
  if (facts === undefined || facts.terminalModes) return false
  if (screen.promptKind && ownsPrompt(facts, screen)) return false
  return isStdinWaitProvenOrUnprovable(facts)
}

/**
 * Whether the group in front is the one whose prompt the cursor sits after: the shell's group for
 * its own prompts, the marking process for a REPL's.
 */
export function ownsPrompt(facts: ForegroundFacts, screen: ScreenView): boolean {
  if (screen.promptKind !== 'repl') return facts.isShellGroup
  const pid = screen.replPrompt?.pid
  if (pid === undefined) return false
  if (facts.program && isMarkingProcess(facts.program, pid)) return true
  // Other waiting processes are known by their host pid only, which a sandboxed REPL cannot know.
  return facts.program?.namespacePid === undefined && facts.waits.some((wait) => wait.pid === pid)
}

/**
 * Whether `program` printed a marker carrying `pid`: a REPL reports the pid it sees itself, which
 * inside a sandbox's pid namespace is its namespace pid, not the host's.
 */
export function isMarkingProcess(program: ForegroundProgram, pid: number): boolean {
  return (program.namespacePid ?? program.pid) === pid
}
