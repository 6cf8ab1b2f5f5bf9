/**
 * Attacks on `envFiles` through the remote provider, with a real session host: a spawn inside the
 * documented bounds must never take down the link that carries the other terminals.
 */
import { randomBytes } from 'node:crypto'
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { basename, dirname } from 'node:path'
import { isSubprocessError } from 'dsh-subprocess'
import { eventually, isAlive } from 'dsh-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { bashSpec, cleanupAtEnd, collect, mountRemote } from './support/remote'

// The seam's bounds (internal to dsh-subprocess): at most 8 files of 64 KiB each.
const MAX_ENV_FILES = 8
const MAX_ENV_FILE_BYTES = 65_536

const cleanup = cleanupAtEnd()
const socketPath = cleanup.socket()
const written: string[] = []
afterAll(async () => {
  for (const path of written) rmSync(path, { force: true })
  await cleanup.stop()
})

describe('envFiles at the bounds, over a real session host', () => {
  it('a spawn whose envFiles are within the bounds but too large for one frame once JSON-escaped is refused (INVALID_SPEC), and the link and its other terminals live on', async () => {
    const remote = await mountRemote({ socketPath, idleExitMs: 0 })
    try {
      const survivor = await remote.runtime.spawnTerminal(bashSpec())
      cleanup.process((await remote.runtime.sessionHostPid())!)
      // Each control byte is six on the wire (\u0001): 8 × 64 KiB becomes 3 MiB, past the 1 MiB frame.
      const envFiles = Object.fromEntries(Array.from({ length: MAX_ENV_FILES }, (_, i) => [`F${i}`, '\u0001'.repeat(MAX_ENV_FILE_BYTES)]))
      const error = await remote.runtime.spawnTerminal(bashSpec({ envFiles })).catch((caught: unknown) => caught)
      expect(isSubprocessError(error, 'INVALID_SPEC')).toBe(true)
      expect((error as Error).message).toMatch(/frame/)
      expect(isAlive(survivor.pid)).toBe(true)
      const text = collect(survivor)
      await survivor.write('echo still-$((20+1))\r')
      await eventually(() => text().includes('still-21'), 'the other terminal to answer on the same link')
      // The link takes new spawns too.
      const next = await remote.runtime.spawnTerminal(bashSpec())
      expect(isAlive(next.pid)).toBe(true)
    } finally {
      await remote.dispose()
    }
  })

  it('exactly the bounds in plain text (8 files of 64 KiB, multibyte included) reach the target and read back byte for byte', async () => {
    const remote = await mountRemote({ socketPath, idleExitMs: 0 })
    try {
      const contents = Array.from({ length: MAX_ENV_FILES }, (_, i) => (i === 0 ? 'é'.repeat(MAX_ENV_FILE_BYTES / 2) : String(i).repeat(MAX_ENV_FILE_BYTES)))
      const envFiles = Object.fromEntries(contents.map((content, i) => [`F${i}`, content]))
      const shell = await remote.runtime.spawnTerminal(bashSpec({ envFiles }))
      cleanup.process((await remote.runtime.sessionHostPid())!)
      const environ = await eventually(() => {
        const text = readFileSync(`/proc/${shell.pid}/environ`, 'utf8')
        return text.includes('F7=') && text
      }, "the shell's environment")
      const paths = Object.fromEntries(
        environ
          .split('\0')
          .filter((entry) => /^F\d=/.test(entry))
          .map((entry) => [entry.slice(0, 2), entry.slice(3)]),
      )
      written.push(...Object.values(paths))
      expect(contents.map((_, i) => readFileSync(paths[`F${i}`]!, 'utf8'))).toEqual(contents)
    } finally {
      await remote.dispose()
    }
  })

  it('several session hosts (separate processes) writing the same new content at once: every spawn gets the one intact file, no temporary is left', async () => {
    const content = `# ${randomBytes(8).toString('hex')}\n${'x'.repeat(60_000)}\n`
    const remotes = await Promise.all(Array.from({ length: 3 }, () => mountRemote({ socketPath: cleanup.socket(), idleExitMs: 0 })))
    try {
      // Registered before anything can fail: a session host with no idle exit must not outlive the file.
      for (const remote of remotes) cleanup.process((await remote.runtime.sessionHostPid())!)
      const shells = await Promise.all(
        remotes.flatMap((remote) => Array.from({ length: 3 }, () => remote.runtime.spawnTerminal(bashSpec({ envFiles: { DSH_RACE: content } })))),
      )
      // A pid's environ is the launcher's until it execs the shell: wait for the shell's own.
      const raced = (pid: number) =>
        readFileSync(`/proc/${pid}/environ`, 'utf8')
          .split('\0')
          .find((pair) => pair.startsWith('DSH_RACE='))
          ?.slice('DSH_RACE='.length)
      const paths = new Set<string>()
      for (const shell of shells) paths.add(await eventually(() => raced(shell.pid), "the shell's environment"))
      expect(paths.size).toBe(1)
      const [path] = [...paths]
      written.push(path!)
      expect(readFileSync(path!, 'utf8')).toBe(content)
      expect(readdirSync(dirname(path!)).filter((name) => name.startsWith(`${basename(path!)}.`))).toEqual([])
    } finally {
      await Promise.all(remotes.map((remote) => remote.dispose()))
    }
  })
})
