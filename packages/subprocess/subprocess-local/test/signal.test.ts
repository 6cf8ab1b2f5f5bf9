import { afterEach, describe, expect, it } from 'vitest'
import { eventually, isAlive } from 'dsh-testkit'
import { BASH, BASH_ENV, capture, mountRuntime, PYTHON } from './helpers'

let env: Awaited<ReturnType<typeof mountRuntime>> | undefined

afterEach(async () => {
  await env?.close()
  env = undefined
})

describe('signalForeground', () => {
  // isAlive (dsh-testkit) reads /proc: these two run on Linux only.
  it.skipIf(process.platform !== 'linux')('delivers a real SIGINT to a raw-mode program that turned ISIG off', async () => {
    env = await mountRuntime()
    const shell = await env.spawn({ argv: BASH, env: BASH_ENV })
    const out = capture(shell)
    await out.waitFor(/PROMPT\$ $/)
    const script = 'import os, sys, time, tty; tty.setraw(0); print("RAW", os.getpid(), flush=True); time.sleep(60)'
    await shell.write(`${PYTHON} -c '${script}'\r`)
    const pid = Number((await out.waitFor(/RAW (\d+)/))[1])
    const from = out.length()
    await shell.write('\x03') // ISIG is off: ^C is just a byte now, nothing happens.
    expect(isAlive(pid)).toBe(true)
    const pgid = await shell.signalForeground('SIGINT')
    expect(pgid).toBe(pid)
    await out.waitFor(/KeyboardInterrupt/, from)
    await eventually(() => !isAlive(pid), 'python to exit')
    await eventually(async () => (await shell.inspectForeground())?.isShellGroup, 'the shell back in front')
  })

  it.skipIf(process.platform !== 'linux')('refuses SIGKILL aimed at the shell group but kills a foreground job', async () => {
    env = await mountRuntime()
    const shell = await env.spawn({ argv: BASH, env: BASH_ENV })
    const out = capture(shell)
    await out.waitFor(/PROMPT\$ $/)
    await expect(shell.signalForeground('SIGKILL')).rejects.toMatchObject({
      code: 'REFUSED_SHELL_KILL',
      message: 'refusing to SIGKILL the terminal shell; terminate the terminal session instead',
    })
    expect(isAlive(shell.pid)).toBe(true)
    await shell.write('sleep 60; echo after-$?\r')
    const job = await eventually(async () => {
      const facts = await shell.inspectForeground()
      return facts && !facts.isShellGroup ? facts : undefined
    }, 'sleep in front')
    expect(await shell.signalForeground('SIGKILL')).toBe(job.processGroupId)
    await out.waitFor(/after-137/)
  })

  it('signals the top-level program itself when it is in front (no shell)', async () => {
    env = await mountRuntime()
    const handle = await env.spawn({ argv: ['sleep', '60'] })
    expect(await handle.signalForeground('SIGINT')).toBe(handle.pid)
    expect(await handle.done).toEqual({ exitCode: null, signal: 'SIGINT' })
  })

  it('rejects an unknown signal name', async () => {
    env = await mountRuntime()
    const handle = await env.spawn({ argv: ['sleep', '60'] })
    await expect(handle.signalForeground('SIGNOPE' as NodeJS.Signals)).rejects.toMatchObject({ code: 'INVALID_SPEC' })
  })
})
