import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { commandLine, eventually, isAlive } from 'dsh-testkit'
import { describeRealBash } from './real-bash-suite'
import { mountRealTools } from './real-stack'

// The same tool suite on the durable composition (examples/durable.yml's two changes): terminals in a
// session host started for this test (dsh-subprocess-remote, a private socket) and detachedTtlMs on
// the registry. After disposal the session host, holding no terminal, exits by itself.
const dir = mkdtempSync(join(tmpdir(), 'dsh-tools-durable-'))
const socketPath = join(dir, 'session-host.sock')

/** Live session hosts serving this test's socket. */
function sessionHosts(): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => isAlive(pid) && (commandLine(pid) ?? []).includes(socketPath))
}

describeRealBash({
  label: 'durable, through a session host',
  mount: () => mountRealTools({ detachedTtlMs: 900_000 }, { remote: { socketPath, idleExitMs: 200 } }),
  after: async () => {
    await eventually(() => sessionHosts().length === 0, 'the session host exited')
    rmSync(dir, { recursive: true, force: true })
  },
})
