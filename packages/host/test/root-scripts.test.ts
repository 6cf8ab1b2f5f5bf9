import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { start } from './process'

const hasPnpm = spawnSync('pnpm', ['--version'], { stdio: 'ignore' }).status === 0

/** Run one of the checkout's root scripts through pnpm (as a person would), feed `input`, wait for the exit. */
async function pnpmScript(args: readonly string[], input: string) {
  const running = start('pnpm', ['--silent', ...args])
  running.child.stdin.end(input)
  return running.finished
}

describe.skipIf(!hasPnpm)("the checkout's root scripts run the CLI from sources, without a build", () => {
  it.each([
    ['pnpm headless', ['headless', '--', '--config', 'examples/snapshot.yml']],
    ['pnpm start -- headless', ['start', '--', 'headless', '--config', 'examples/snapshot.yml']],
  ])('`%s` answers JSON lines on stdout and exits 0 at EOF', async (_label, args) => {
    const result = await pnpmScript(args, '{"id": 1, "tool": "job_list"}\n')
    expect(result.code).toBe(0)
    const lines = result.stdout.trimEnd().split('\n')
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([{ id: 1, isError: false, text: '(no jobs)', meta: { count: 0 } }])
  })
})
