import { spawn } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { children, commandLine, descendants, eventually, identify, isAlive, processesRunning, processName, statFields, stillRunning } from '../src/index'

describe.skipIf(process.platform !== 'linux')('/proc helpers', () => {
  it('see a child from start to exit, by pid, identity, name and argv', async () => {
    const argv = ['sleep', '47.125']
    const child = spawn(argv[0] as string, argv.slice(1), { stdio: 'ignore' })
    const pid = child.pid as number
    try {
      await eventually(() => processName(pid) === 'sleep', 'the exec of sleep')
      expect(isAlive(pid)).toBe(true)
      expect(statFields(pid)?.[1]).toBe(String(process.pid))
      expect(children(process.pid)).toContain(pid)
      const identity = identify(pid)
      expect(identity).toMatchObject({ pid, started: expect.stringMatching(/^\d+$/) })
      expect(descendants(process.pid)).toContainEqual(identity)
      expect(commandLine(pid)?.slice(1)).toEqual(argv.slice(1))
      expect(processesRunning(argv)).toEqual([pid])
      child.kill('SIGKILL')
      await eventually(() => !isAlive(pid), 'the child to die')
      expect(stillRunning(identity as NonNullable<typeof identity>)).toBe(false)
    } finally {
      child.kill('SIGKILL')
    }
  })

  it('answer undefined or empty for a pid that does not exist', () => {
    const none = 2 ** 22 + 1
    expect([statFields(none), identify(none), processName(none), commandLine(none)]).toEqual([undefined, undefined, undefined, undefined])
    expect(isAlive(none)).toBe(false)
    expect(children(none)).toEqual([])
  })
})
