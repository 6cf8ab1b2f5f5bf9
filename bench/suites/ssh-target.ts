// Sessions on ssh targets (issue 27): a second host in a network namespace of this run's own with
// its own sshd (the testkit's startSshHost; needs root), reached by dsh-subprocess-remote's
// `connect: [ssh, …, dsh-session-host, --stdio]`. Rows: the per-call overhead of a `true` send over
// the ssh target against a raw `ssh -tt` bash with a marker prompt on the same host (the floor, same
// run, taking turns), and three ssh targets × 50 sessions at once, every echo exact: once with one
// composition per target, once from one composition whose subprocess entry names the three as
// `targets` (the way one MCP host drives many machines). Three hosts: three network namespaces, each
// with its own sshd (startSshHost with index 0–2), not one sshd under three names.
// DSH_BENCH_SSH_SENDS (default 300) and DSH_BENCH_SSH_SESSIONS (default 50) shrink a quick run.
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { Context, type Fiber } from '@deepseek-ai/cordis'
import { type SshHost, startSshHost } from 'dsh-testkit'
import * as agentPlugin from '../../packages/agent/src/index'
import { hostRuntimeDir } from '../../packages/sandbox/sandbox/src/index'
import * as policyPlugin from '../../packages/sandbox/sandbox-policy/src/index'
import { sessionHostCommand } from '../../packages/subprocess/session-host/src/index'
import * as remotePlugin from '../../packages/subprocess/subprocess-remote/src/index'
import * as bashPlugin from '../../packages/terminal/terminal-bash/src/index'
import * as terminalPlugin from '../../packages/terminal/terminal/src/index'
import type { TerminalSessionId } from '../../packages/terminal/terminal/src/index'
import { collectRotating, STEADY_WARMUP_SENDS, timed } from '../lib/measure'
import { wants } from '../lib/row-filter'
import { BACKEND_CONFIG, exact } from '../lib/shell-stack'
import { ptyRelayCommand, StreamShell } from '../lib/stream-shell'
import type { BenchRow } from '../lib/types'

const SENDS = positive('DSH_BENCH_SSH_SENDS', 300)
const SESSIONS = positive('DSH_BENCH_SSH_SESSIONS', 50)
const TARGETS = 3
const ROUNDS = 3
// Steady state, as the shell suite's per-send rows: the send path is JIT-optimized only after thousands of calls.
const WARMUP = Math.min(STEADY_WARMUP_SENDS, SENDS * 5)
const TRUE_FLOOR = 'raw `ssh -tt` bash: `true` round trip'
const TRUE_RELAY = 'bare PTY relay behind `ssh -T`: `true` round trip'
const TRUE = 'ssh target: `true` round trip'
const PARALLEL = `ssh targets: ${TARGETS} × ${SESSIONS} sessions (open + echo + close), concurrent`
const NAMED = `ssh targets: ${TARGETS} × ${SESSIONS} sessions from one composition (named targets), concurrent`

function positive(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(value) || value < 1) throw new Error(`bench: ${name} must be a positive integer, got ${process.env[name]}`)
  return value
}

/** The floor: bash on the target behind `ssh -tt`, its PROMPT_COMMAND printing an OSC 133 marker before `dsh> `. */
function rawSshShell(host: SshHost): StreamShell {
  const [file = 'ssh', ...args] = host.ssh.filter((option) => option !== '-T')
  const remote = `env TERM=xterm-256color HISTFILE= PS1='dsh> ' PROMPT_COMMAND='printf "\\033]133;D;%s\\007" "$?"' bash --noprofile --norc -i`
  return new StreamShell([file, '-tt', ...args, remote])
}

/**
 * The default shell stack (unconfined, as the floor) with its terminals on `host`, one ssh connection.
 * `--socket` is the run's own: the targets share this machine's filesystem, and a `--stdio` that
 * relays to a socket session host (protocol version 2) must reach one of this target only.
 */
async function mountSshStack(hosts: readonly SshHost[]) {
  const root = new Context()
  const fibers: Fiber[] = []
  const sockets = hosts.map(() => join(hostRuntimeDir(process.getuid?.() ?? -1), `bench-ssh-${randomBytes(6).toString('hex')}`, 'session-host.sock'))
  fibers.push(await root.plugin(agentPlugin))
  const connects = hosts.map((host, index) => host.connect([...sessionHostCommand(), '--stdio', '--socket', sockets[index]!]))
  // One host: it is the default target (`connect`); several: named targets `t0`, `t1`, … of one provider.
  const names = hosts.length === 1 ? [undefined] : hosts.map((_, index) => `t${index}`)
  const provider =
    hosts.length === 1
      ? { connect: connects[0], startTimeoutMs: 30_000 }
      : { targets: Object.fromEntries(connects.map((connect, index) => [names[index], { connect }])), startTimeoutMs: 30_000 }
  fibers.push(await root.plugin(remotePlugin, provider))
  fibers.push(await root.plugin(policyPlugin, { mode: 'danger-full-access' }))
  fibers.push(await root.plugin(terminalPlugin, { maxSessionsPerAgent: hosts.length * SESSIONS + 8 }))
  fibers.push(await root.plugin(bashPlugin, BACKEND_CONFIG))
  const agent = await root.agents.create()
  const terminals = root.terminals
  const spawn = (target: string | undefined) => terminals.spawn(agent, { type: 'shell', cwd: '/tmp', ...(target ? { target } : {}) })
  // Connect now, one target at a time: a cold connect (ssh login, the relay, the socket session host
  // under tsx) must answer its hello within the client's deadline, which three at once under load miss.
  for (const target of names) await terminals.close(agent, (await spawn(target)).sessionId)
  return {
    /** The names to open on (`undefined`: the default target). */
    targets: names,
    open: async (target?: string) => (await spawn(target)).sessionId,
    run: async (id: TerminalSessionId, text: string) => {
      const send = terminals.startSend(agent, id, { text, submit: true })
      const result = await send.done
      await send.released
      return result
    },
    close: (id: TerminalSessionId) => terminals.close(agent, id),
    dispose: async () => {
      await agent.dispose()
      for (const fiber of fibers.reverse()) await fiber.dispose()
      for (const socket of sockets) rmSync(dirname(socket), { recursive: true, force: true })
    },
  }
}
type SshStack = Awaited<ReturnType<typeof mountSshStack>>

/** The ssh-target rows; the hosts (namespaces, sshd) live for this suite only. */
export async function sshTarget(): Promise<BenchRow[]> {
  if (process.getuid?.() !== 0) throw new Error('bench: the ssh-target suite needs root (it makes network namespaces)')
  const rows: BenchRow[] = []
  const hosts: SshHost[] = []
  const stacks: SshStack[] = []
  try {
    for (let index = 0; index < TARGETS; index++) hosts.push(await startSshHost({ index }))
    for (const host of hosts) stacks.push(await mountSshStack([host]))
    if (wants(TRUE_FLOOR, TRUE_RELAY, TRUE)) rows.push(...(await roundTrips(hosts[0]!, stacks[0]!)))
    if (wants(PARALLEL)) rows.push(await parallel(stacks, PARALLEL, 'one composition (and one ssh connection) per target'))
    if (wants(NAMED)) {
      const named = await mountSshStack(hosts)
      stacks.push(named)
      rows.push(await parallel([named], NAMED, `one composition whose provider names the ${TARGETS} hosts as targets (one ssh connection each)`))
    }
  } finally {
    for (const stack of stacks) await stack.dispose().catch(() => undefined)
    for (const host of hosts) await host.stop()
  }
  return rows
}

/**
 * `true` over the ssh target against the raw ssh bash on the same host, taking turns; beside them
 * the bare PTY relay behind `ssh -T`: the least a design with a process between sshd and the PTY pays.
 */
async function roundTrips(host: SshHost, stack: SshStack): Promise<BenchRow[]> {
  const raw = rawSshShell(host)
  const relay = new StreamShell(host.connect(ptyRelayCommand()))
  await raw.ready()
  await relay.ready()
  const id = await stack.open()
  try {
    const floor = async () => (await timed(() => raw.run('true'))) * 1000
    const relayed = async () => (await timed(() => relay.run('true'))) * 1000
    const ours = async () => (await timed(async () => exact(await stack.run(id, 'true'), '', '`true` over ssh', 'prompt'))) * 1000
    const [floorSamples, relaySamples, oursSamples] = await collectRotating(SENDS, [floor, relayed, ours], WARMUP)
    const turns = `${WARMUP} sends each first, then turns`
    return [
      { figure: TRUE_FLOOR, unit: 'µs', note: 'bash -i on the target behind ssh -tt, settled on an OSC 133 marker before its prompt', samples: floorSamples! },
      {
        figure: TRUE_RELAY,
        unit: 'µs',
        floor: TRUE_FLOOR,
        note: `the floor's bash in node-pty inside bench/children/pty-relay.ts behind ssh -T, bytes copied and nothing else; ${turns}`,
        samples: relaySamples!,
      },
      {
        figure: TRUE,
        unit: 'µs',
        floor: TRUE_FLOOR,
        note: `the default shell stack, its session host on the target over ssh -T (one connection); ${turns}`,
        samples: oursSamples!,
      },
    ]
  } finally {
    await stack.close(id)
    await raw.close()
    await relay.close()
  }
}

/** On every target of every stack, `SESSIONS` sessions open at once, each echoes its own token and closes. */
async function parallel(stacks: readonly SshStack[], figure: string, how: string): Promise<BenchRow> {
  const places = stacks.flatMap((stack) => stack.targets.map((target) => ({ stack, target })))
  const round = () =>
    timed(() =>
      Promise.all(
        places.flatMap(({ stack, target: name }, target) =>
          Array.from({ length: SESSIONS }, async (_, index) => {
            const id = await stack.open(name)
            const token = `token-${target}-${index}`
            exact(await stack.run(id, `echo ${token}`), `${token}\n`, `session ${index} on target ${target}`)
            await stack.close(id)
          }),
        ),
      ),
    )
  const [samples] = await collectRotating(ROUNDS, [round], 1)
  return {
    figure,
    unit: 'ms',
    note: `one MCP-host process, ${how}; every echo must settle as stdin_read with its own output, or the bench fails`,
    samples: samples!,
  }
}
