import xterm from '@xterm/headless'
import type { TerminalHumanObserver, TerminalScreen, TerminalSessionId } from 'dsh-terminal'
import { eventually } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useUnicode11 } from '../src/screen/emulator'
import { renderScreen } from '../src/screen/screen-render'
import { startStack, type Stack } from './support/stack'

// A person watching a real bash session: the replayed screen plus the live bytes after it must draw
// exactly what the session's own emulator shows, and what they type behaves as typed at a terminal.
let stack: Stack

beforeAll(async () => {
  stack = await startStack(undefined, { terminals: { humanActiveMs: 0 } })
})
afterAll(async () => {
  await stack.dispose()
})

/** Collects a view's output as one byte stream. */
function watcher() {
  const chunks: Uint8Array[] = []
  const ended: string[] = []
  const observer: TerminalHumanObserver = { onOutput: (bytes) => chunks.push(bytes), onEnd: (reason) => ended.push(reason) }
  const text = () => Buffer.concat(chunks).toString('utf8')
  return { observer, chunks, ended, text }
}

/** What a fresh terminal of `size` shows after `parts` are written to it, rendered like the session's own screen. */
async function drawn(size: { rows: number; cols: number }, parts: (string | Uint8Array)[]): Promise<TerminalScreen> {
  const terminal = new xterm.Terminal({ rows: size.rows, cols: size.cols, scrollback: 0, allowProposedApi: true })
  useUnicode11(terminal)
  for (const part of parts) await new Promise<void>((resolve) => terminal.write(part, resolve))
  const screen = renderScreen(terminal, undefined)
  terminal.dispose()
  return screen
}

/** The parts of a screen a redraw must reproduce (the title is not part of the replay). */
function visible(screen: TerminalScreen) {
  return { size: screen.size, lines: screen.lines, cursor: screen.cursor, alternateScreen: screen.alternateScreen }
}

describe('a person attached to a real session', () => {
  let id: TerminalSessionId

  beforeAll(async () => {
    id = (await stack.open()).sessionId
    await stack.run(id, "printf '\\033[31mred\\033[0m before-attach\\n'")
  })

  it('starts from the rendered screen and follows the live bytes, so both together draw the session screen', async () => {
    const seen = watcher()
    const view = await stack.terminals.observeAsHuman(stack.agent, id, seen.observer)
    expect(view.size).toEqual({ rows: 40, cols: 160 })
    expect(view.screen).toContain('before-attach')
    // Colours survive the replay (SGR 31 for the red word).
    expect(view.screen).toMatch(/\x1b\[[0-9;]*31m/)
    await stack.run(id, 'echo live-one; echo live-two')
    await eventually(() => seen.text().includes('live-two'), 'the watcher to see live-two')
    const screen = await stack.terminals.screen(stack.agent, id)
    expect(visible(await drawn(view.size as { rows: number; cols: number }, [view.screen, ...seen.chunks]))).toEqual(visible(screen as TerminalScreen))
    view.close()
  })

  it('replays a full-screen program on the alternate screen, and the view follows its redraws', async () => {
    const seen = watcher()
    await stack.run(id, "printf '\\033[?1049h\\033[2J\\033[5;10Hpanel one'")
    const view = await stack.terminals.observeAsHuman(stack.agent, id, seen.observer)
    await stack.run(id, "printf '\\033[6;10Hpanel two'")
    await eventually(() => seen.text().includes('panel two'), 'the watcher to see the redraw')
    const screen = (await stack.terminals.screen(stack.agent, id)) as TerminalScreen
    expect(screen.alternateScreen).toBe(true)
    expect(visible(await drawn(view.size as { rows: number; cols: number }, [view.screen, ...seen.chunks]))).toEqual(visible(screen))
    view.close()
    await stack.run(id, "printf '\\033[?1049l'")
  })

  it('what the person types runs in the shell, and the agent reads it as earlier output on its next send', async () => {
    const seen = watcher()
    const view = await stack.terminals.observeAsHuman(stack.agent, id, seen.observer)
    view.takeWrite()
    await view.write('echo typed-by-a-person-$((6*7))\r')
    await eventually(() => seen.text().includes('typed-by-a-person-42'), 'the typed command to run')
    const next = await stack.run(id, 'true')
    expect(next.earlierOutput).toContain('typed-by-a-person-42')
    expect(next.human).toBe('watching')
    expect(next.waitReason).toBe('stdin_read')
    view.close()
  })

  it('a secret typed by the person while echo is off appears in no result, read or watcher stream', async () => {
    const asked = await stack.run(id, 'read -r -s -p \'secret: \' SECRET; echo; echo "length=${#SECRET}"')
    expect(asked.input?.kind).toBe('password')
    const seen = watcher()
    const view = await stack.terminals.observeAsHuman(stack.agent, id, seen.observer)
    view.takeWrite()
    await view.write('hunter2-xyz\r')
    await eventually(() => seen.text().includes('length=11'), 'read -s to take the secret')
    const next = await stack.run(id, 'true')
    expect(next.earlierOutput).toContain('length=11')
    const read = stack.terminals.read(stack.agent, id, { count: 200 })
    const screen = (await stack.terminals.screen(stack.agent, id)) as TerminalScreen
    for (const text of [JSON.stringify(next), JSON.stringify(asked), read.text, seen.text(), screen.lines.join('\n')]) {
      expect(text).not.toContain('hunter2')
    }
    view.close()
  })

  it('hears the shell exit once when the person ends it, and a new view of the ended session ends at once', async () => {
    const other = (await stack.open()).sessionId
    const seen = watcher()
    const view = await stack.terminals.observeAsHuman(stack.agent, other, seen.observer)
    view.takeWrite()
    await view.write('exit 3\r')
    await eventually(() => seen.ended.length > 0, 'the view to end')
    expect(seen.ended).toEqual(['the shell exited with status 3'])
    expect(view.writing).toBe(false)
    const late = watcher()
    await stack.terminals.observeAsHuman(stack.agent, other, late.observer).catch(() => undefined)
    await eventually(() => late.ended.length > 0, 'the late view to end')
    expect(late.ended).toEqual(['the shell exited with status 3'])
    await stack.terminals.close(stack.agent, other)
  })
})
