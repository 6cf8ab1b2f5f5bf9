import type { TerminalSessionId } from 'dsh-terminal'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PATIENT, startStack, type Stack } from './support/stack'

// Programs that draw in place on the normal screen (no alternate screen): cursor-addressed output,
// scroll regions, a redraw above the cursor. Their line history is fragments in drawing order; the
// result carries the screen, which is what a person sees. Plain line output keeps its lines alone.
let stack: Stack
let id: TerminalSessionId

beforeAll(async () => {
  stack = await startStack(PATIENT)
  id = (await stack.open()).sessionId
})

afterAll(async () => {
  await stack.dispose()
})

describe('a program that moves the cursor to other rows', () => {
  it('comes back as its screen: a box drawn at addressed rows and columns', async () => {
    const draw = "clear; printf '\\033[5;10HBOX-TOP\\033[7;10HBOX-END\\033[6;10HBOX-MID\\033[9;1H'"
    const result = await stack.run(id, draw)
    expect(result.screen?.alternateScreen).toBe(false)
    const lines = result.screen?.lines ?? []
    expect(lines.slice(4, 7)).toEqual(['         BOX-TOP', '         BOX-MID', '         BOX-END'])
    expect(result.screen?.lines.at(-1)).toBe('dsh>')
  })

  it('comes back as its screen: a status line rewritten above the output it keeps printing', async () => {
    // Three numbered lines, then back up two rows to rewrite the first as done: the line view has
    // the rewrite after the lines, the screen has it in place.
    const draw = "printf 'job-1 running\\njob-2 running\\n\\033[2A\\033[2Kjob-1 DONE\\033[2B\\r'"
    const result = await stack.run(id, draw)
    const lines = result.screen?.lines ?? []
    const done = lines.indexOf('job-1 DONE')
    expect(done).toBeGreaterThan(-1)
    expect(lines[done + 1]).toBe('job-2 running')
    expect(lines.at(-1)).toBe('dsh>')
  })

  it('comes back as its screen after a scroll region is set and reset', async () => {
    const result = await stack.run(id, "printf '\\033[1;3r\\033[3;1Hregion-a\\nregion-b\\nregion-c\\n\\033[r\\033[10;1H'")
    expect(result.screen).toBeDefined()
    expect(result.screen?.lines.join('\n')).toContain('region-c')
  })

  it('keeps plain line output as lines, without a screen', async () => {
    const result = await stack.run(id, 'seq 3')
    expect(result.screen).toBeUndefined()
    expect(result.viewport).toBe('seq 3\n1\n2\n3\ndsh> ')
  })
})
