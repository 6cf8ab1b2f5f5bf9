import { afterEach, describe, expect, it } from 'vitest'
import { eventually, isAlive } from 'dsh-testkit'
import { isStdinWaitProven } from 'dsh-subprocess'
import { BASH, BASH_ENV, capture, mountRuntime } from './helpers'

let env: Awaited<ReturnType<typeof mountRuntime>> | undefined

afterEach(async () => {
  await env?.close()
  env = undefined
})

/**
 * The shell under a wrapper, the way a sandbox launcher starts it: the top-level process (here a
 * non-interactive `sh`, under bwrap the outer bwrap) forks the interactive bash, which then leads
 * a process group of its own. `; exit $?` keeps sh from exec'ing bash in its place.
 */
const WRAPPED_BASH = ['sh', '-c', `${BASH.join(' ')}; exit $?`]

async function wrappedShellAtPrompt() {
  env = await mountRuntime()
  const shell = await env.spawn({ argv: WRAPPED_BASH, env: BASH_ENV })
  const out = capture(shell)
  await out.waitFor(/PROMPT\$ $/)
  // The prompt text arrives a moment before readline blocks: sample until the wait is proven.
  const idle = await eventually(async () => {
    const facts = await shell.inspectForeground()
    return facts && isStdinWaitProven(facts) ? facts : undefined
  }, 'the wrapped shell blocked reading at its prompt')
  return { shell, out, idle }
}

describe('pinShellGroup: the shell group of a wrapped shell', () => {
  // A proven stdin wait and isAlive (dsh-testkit) need /proc: the first three run on Linux only.
  it.skipIf(process.platform !== 'linux')('unpinned, the idle wrapped shell is not recognised as the shell group', async () => {
    const { shell, idle } = await wrappedShellAtPrompt()
    expect(idle.processGroupId).not.toBe(shell.pid)
    expect(idle.isShellGroup).toBe(false)
  })

  it.skipIf(process.platform !== 'linux')('pinned at the idle prompt: the shell is recognised, SIGKILL to it is refused, a job is not the shell', async () => {
    const { shell, out, idle } = await wrappedShellAtPrompt()
    shell.pinShellGroup(idle.processGroupId)
    expect(await shell.inspectForeground()).toMatchObject({ processGroupId: idle.processGroupId, isShellGroup: true })
    await expect(shell.signalForeground('SIGKILL')).rejects.toMatchObject({
      code: 'REFUSED_SHELL_KILL',
      message: 'refusing to SIGKILL the terminal shell; terminate the terminal session instead',
    })
    expect(isAlive(idle.processGroupId)).toBe(true)

    const from = out.length()
    await shell.write('sleep 60; echo after-$?\r')
    const job = await eventually(async () => {
      const facts = await shell.inspectForeground()
      return facts && facts.processGroupId !== idle.processGroupId ? facts : undefined
    }, 'sleep in front')
    expect(job.isShellGroup).toBe(false)
    expect(await shell.signalForeground('SIGKILL')).toBe(job.processGroupId)
    await out.waitFor(/after-137/, from)
    await eventually(async () => (await shell.inspectForeground())?.isShellGroup, 'the shell back in front')
  })

  it.skipIf(process.platform !== 'linux')('still refuses SIGKILL to the top-level process own group when another group is pinned', async () => {
    env = await mountRuntime()
    // `sleep` is the top-level process and stays in front; the pin names some other group.
    const handle = await env.spawn({ argv: ['sleep', '60'] })
    handle.pinShellGroup(handle.pid + 1)
    expect(await handle.inspectForeground()).toMatchObject({ processGroupId: handle.pid, isShellGroup: false })
    await expect(handle.signalForeground('SIGKILL')).rejects.toMatchObject({ code: 'REFUSED_SHELL_KILL' })
    expect(isAlive(handle.pid)).toBe(true)
  })

  it('rejects a group that is not a positive integer, and ignores a pin after exit', async () => {
    env = await mountRuntime()
    const handle = await env.spawn({ argv: ['sleep', '60'] })
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => handle.pinShellGroup(bad)).toThrow(expect.objectContaining({ code: 'INVALID_SPEC' }))
    }
    await handle.terminate()
    expect(() => handle.pinShellGroup(handle.pid)).not.toThrow()
    expect(await handle.inspectForeground()).toBeUndefined()
  })
})
