import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { eventually, isAlive } from 'dsh-testkit'

const tsx = createRequire(import.meta.url).resolve('tsx/cli')
const fixture = fileURLToPath(new URL('./fixtures/exiting-host.ts', import.meta.url))

/** Run the fixture host to completion; resolves the pids it reported. */
async function runHost(...args: string[]): Promise<{ shell: number; kid: number }> {
  const host = spawn(process.execPath, [tsx, '--conditions=dsh-source', fixture, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
  let stdout = ''
  host.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  const code = await new Promise<number | null>((resolve) => host.on('exit', resolve))
  expect(code).toBe(0)
  return JSON.parse(stdout.trim()) as { shell: number; kid: number }
}

describe.skipIf(process.platform !== 'linux')('host exit', () => {
  it('kills every managed tree synchronously when the host process exits', async () => {
    const { shell, kid } = await runHost()
    try {
      await eventually(() => !isAlive(kid) && !isAlive(shell), 'the tree to be gone', 5000)
    } finally {
      for (const pid of [kid, shell]) if (isAlive(pid)) process.kill(pid, 'SIGKILL')
    }
  })

  it('(control) without the exit guard the TERM/HUP-ignoring child outlives the host', async () => {
    const { shell, kid } = await runHost('--no-exit-cleanup')
    try {
      // The kernel's hangup ends the shell once the host's PTY master closes; the child ignores it.
      await eventually(() => !isAlive(shell), 'the shell to hang up', 5000)
      expect(isAlive(kid)).toBe(true)
    } finally {
      for (const pid of [kid, shell]) if (isAlive(pid)) process.kill(pid, 'SIGKILL')
    }
  })
})
