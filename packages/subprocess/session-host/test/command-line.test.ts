import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { sessionHostCommand } from '../src/index'

/** Run the bin with `args` and nothing on stdin; it must end by itself. */
function run(args: string[]) {
  const [file = '', ...prefix] = sessionHostCommand()
  return spawnSync(file, [...prefix, ...args], { encoding: 'utf8', timeout: 30_000, input: '' })
}

describe('dsh-session-host command line', () => {
  it('prints its usage on --help and exits 0, listening nowhere', () => {
    const result = run(['--help'])
    expect(result.status).toBe(0)
    expect(result.stdout).toMatch(/^usage: dsh-session-host \[--stdio\] \[--socket PATH\]/)
    expect(result.stderr).toBe('')
  })

  it('answers an unknown option with its name and the usage on stderr and exit 2, not a stack trace', () => {
    const result = run(['--bogus'])
    expect(result.status).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toContain("Unknown option '--bogus'")
    expect(result.stderr).toContain('usage: dsh-session-host')
    expect(result.stderr).not.toMatch(/\n\s+at /)
  })
})
