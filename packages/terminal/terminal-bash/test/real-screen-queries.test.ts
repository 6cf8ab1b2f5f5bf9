import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TerminalSendResult, TerminalSessionId } from 'dsh-terminal'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installed } from 'dsh-testkit'
import { startStack, type Stack } from './support/stack'

// Real bash in a real PTY: programs that ask the terminal a question get the screen model's answer.
let stack: Stack
let id: TerminalSessionId
const work = mkdtempSync(join(tmpdir(), 'dsh-screen-queries-'))

beforeAll(async () => {
  stack = await startStack()
  id = (await stack.open({ cwd: work })).sessionId
})

afterAll(async () => {
  await stack.dispose()
  rmSync(work, { recursive: true, force: true })
})

/** A raw send (no Enter), as a model presses keys before named keys are encoded. */
function press(text: string): Promise<TerminalSendResult> {
  return stack.run(id, text, { submit: false })
}

describe('terminal queries answered by the screen model', () => {
  it('reports the cursor position (CSI 6 n) to a program that reads it', async () => {
    const result = await stack.run(id, `printf 'abc\\e[6n'; IFS=';' read -rsdR -a pos; echo; echo "col=\${pos[1]}"`)
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
    // "abc" left the cursor in column 4.
    expect(result.viewport.split('\n')).toContain('col=4')
  })

  it('answers primary device attributes (CSI c)', async () => {
    const result = await stack.run(id, `printf '\\e[c'; IFS= read -rsdc reply; printf 'da=%q\\n' "\${reply#?}"`)
    expect(result).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
    expect(result.viewport.split('\n')).toContain('da=\\[\\?1\\;2')
  })

  it('advertises xterm-256color and keeps the line view free of colours (ls, grep, git)', async () => {
    mkdirSync(join(work, 'colours', 'subdir'), { recursive: true })
    const listed = await stack.run(id, 'ls --color=always colours')
    expect(listed.viewport).toBe('ls --color=always colours\nsubdir\ndsh> ')
    const grepped = await stack.run(id, "printf 'needle\\n' | grep --color=always needle")
    expect(grepped.viewport).toBe("printf 'needle\\n' | grep --color=always needle\nneedle\ndsh> ")
    const git = await stack.run(id, 'git -c color.ui=always -c init.defaultBranch=main init -q repo && git -C repo -c color.ui=always status --short --branch')
    expect(git.viewport.split('\n').slice(1)).toEqual(['## No commits yet on main', 'dsh> '])
    expect((await stack.run(id, 'echo $TERM')).viewport).toBe('echo $TERM\nxterm-256color\ndsh> ')
  })
})

describe.skipIf(!installed('vim'))('vim, whose queries used to go unanswered', () => {
  it('gets the answers it asks for at startup (its terminal version and colours)', async () => {
    const file = join(work, 'vim-responses.txt')
    // Written as vim leaves: by then every answer it was going to get has arrived.
    const record = `autocmd VimLeave * call writefile([v:termresponse, v:termrbgresp], '${file}')`
    expect(await stack.run(id, `vim -i NONE -c "${record}"`)).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'keys' } })
    expect(await press(':q\r')).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'prompt' } })
    const [version, background] = readFileSync(file, 'utf8').split('\n')
    expect(version).toMatch(/^\x1b\[>\d+;\d+;\d+c$/)
    expect(background).toBe('\x1b]11;rgb:0000/0000/0000\x1b\\')
  })

  it.each([1, 2, 3])('runs the command typed right after :wq (attempt %i of 3)', async (attempt) => {
    const file = join(work, `after-vim-${attempt}.txt`)
    const opened = await stack.run(id, `vim -i NONE ${file}`)
    expect(opened).toMatchObject({ waitReason: 'stdin_read', input: { kind: 'keys', alternateScreen: true } })
    // The send's result shows vim's screen, not its redraw bytes.
    expect(opened.screen).toMatchObject({ alternateScreen: true, size: { rows: 40, cols: 160 } })
    expect(opened.screen?.lines[1]).toBe('~')
    const typed = await press('ihello')
    expect(typed.screen?.lines[0]).toBe('hello')
    expect(typed.screen?.lines.at(-1)).toContain('-- INSERT --')
    await press('\u001b:wq\r')
    const after = await stack.run(id, `echo AFTER; cat ${file}`)
    expect(after.viewport.split('\n')).toEqual(expect.arrayContaining(['AFTER', 'hello']))
    expect(after).toMatchObject({ waitReason: 'stdin_read', exitCode: 0, input: { kind: 'prompt' } })
    expect(after.screen).toBeUndefined()
    // The emulator left the alternate screen with the sanitizer (which the input state reads).
    expect((await stack.terminals.screen(stack.agent, id))?.alternateScreen).toBe(false)
    expect(readFileSync(file, 'utf8')).toBe('hello\n')
  })
})
