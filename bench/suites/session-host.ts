// Terminals in a session host (dsh-subprocess-remote, issue 26) against the same stack with its
// terminals in this process (dsh-subprocess-local): the wire's cost on a `true` round trip, a flood, an
// open and an idle terminal's memory. Both stacks live in this process and take turns; the session
// host is a process of its own, started on first use on a socket of this run's own.
import { randomBytes } from 'node:crypto'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { hostRuntimeDir } from '../../packages/sandbox/sandbox/src/index'
import type { RemoteSubprocessRuntime } from '../../packages/subprocess/subprocess-remote/src/index'
import type { TerminalSessionId } from '../../packages/terminal/terminal/src/index'
import { collectRotating, STEADY_WARMUP_SENDS, STEADY_WARMUP_SESSIONS, timed } from '../lib/measure'
import { RawShell } from '../lib/raw-shell'
import { wants } from '../lib/row-filter'
import { exact, mount, type Stack } from '../lib/shell-stack'
import { ptyRelayCommand, StreamShell } from '../lib/stream-shell'
import type { BenchRow } from '../lib/types'
import { FLOOD, FLOOD_BYTES } from '../lib/workloads'

const TRUE_FLOOR = 'in process: `true` round trip'
const TRUE = 'session host: `true` round trip'
const RAW_FLOOR = 'raw: `true` round trip'
const RAW_RELAY = 'raw behind a bare PTY relay process: `true` round trip'
const RAW_FLOOD = 'raw: 27 MB flood'
const RAW_RELAY_FLOOD = 'raw behind a bare PTY relay process: 27 MB flood'
const FLOOD_FLOOR = 'in process: 27 MB flood'
const FLOOD_ROW = 'session host: 27 MB flood'
const OPEN_FLOOR = 'in process: open'
const OPEN = 'session host: open'
const MEMORY = 'session host: RSS per idle terminal (100 open)'
const RESUME = 'session host: resume of an idle detached session'
const RESUME_ELSEWHERE = 'session host: resume by another host process'
const RESUMES = 30
/** Rounds of the cross-process resume: each mounts and disposes a whole stack (outside the timing). */
const ELSEWHERE_RESUMES = 15
const FLOODS = 5
const IDLE_TERMINALS = 100

/** Resident set of a process, in KiB (VmRSS). */
function rssKiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('VmRSS:'))
  return Number(line?.split(/\s+/)[1] ?? Number.NaN)
}

const PAIR = 'the two stacks in this process take turns'

/** The wire's cost, row by row, with the in-process stack as the floor; `--only` skips the groups it does not name. */
export async function sessionHost(): Promise<BenchRow[]> {
  const socketPath = join(hostRuntimeDir(process.getuid?.() ?? -1), `bench-${randomBytes(6).toString('hex')}`, 'session-host.sock')
  const local: Stack = await mount()
  const remote: Stack = await mount('danger-full-access', { kind: 'session-host', socketPath })
  const rows: BenchRow[] = []
  try {
    if (wants(TRUE_FLOOR, TRUE, RAW_FLOOR, RAW_RELAY, FLOOD_FLOOR, FLOOD_ROW, RAW_FLOOD, RAW_RELAY_FLOOD)) rows.push(...(await sends(local, remote)))
    if (wants(OPEN_FLOOR, OPEN)) rows.push(...(await opens(local, remote)))
    if (wants(MEMORY)) rows.push(await memory(remote))
    if (wants(RESUME)) rows.push(await resumes(socketPath))
    if (wants(RESUME_ELSEWHERE)) rows.push(await resumesElsewhere(socketPath))
    return rows
  } finally {
    await remote.dispose()
    await local.dispose()
    rmSync(join(socketPath, '..'), { recursive: true, force: true })
  }
}

/**
 * `true` and the flood on one shell of each stack, taking turns; beside them the raw floor and the
 * same bash behind a bare relay process: what any session host pays at least.
 */
async function sends(local: Stack, remote: Stack): Promise<BenchRow[]> {
  const localId = await local.open()
  const remoteId = await remote.open()
  const raw = await RawShell.open()
  const relay = new StreamShell(ptyRelayCommand())
  await relay.ready()
  try {
    const trueSend = (stack: Stack, id: TerminalSessionId) => async () => {
      const ms = await timed(async () => exact(await stack.run(id, 'true'), 'dsh> ', '`true`', 'prompt'))
      return ms * 1000
    }
    const rawSend = (shell: RawShell | StreamShell) => async () => (await timed(() => shell.run('true'))) * 1000
    const [trueLocal, trueRemote, trueRaw, trueRelay] = await collectRotating(
      300,
      [trueSend(local, localId), trueSend(remote, remoteId), rawSend(raw), rawSend(relay)],
      STEADY_WARMUP_SENDS,
    )
    const rate = (ms: number) => FLOOD_BYTES / 1_048_576 / (ms / 1000)
    const flood = (stack: Stack, id: TerminalSessionId) => async () => rate(await timed(async () => exact(await stack.run(id, FLOOD), 'dsh> ', 'the flood')))
    const rawFlood = (shell: RawShell | StreamShell) => async () => rate(await timed(() => shell.run(FLOOD)))
    const [floodLocal, floodRemote, floodRaw, floodRelay] = await collectRotating(
      FLOODS,
      [flood(local, localId), flood(remote, remoteId), rawFlood(raw), rawFlood(relay)],
      1,
    )
    return [
      { figure: TRUE_FLOOR, unit: 'µs', samples: trueLocal! },
      { figure: TRUE, unit: 'µs', floor: TRUE_FLOOR, note: `${PAIR}; steady state (${STEADY_WARMUP_SENDS} sends each first)`, samples: trueRemote! },
      {
        figure: RAW_FLOOR,
        unit: 'µs',
        note: "bash in node-pty with a marker prompt, in this process (the shell suite's floor), taking turns with the rows above",
        samples: trueRaw!,
      },
      {
        figure: RAW_RELAY,
        unit: 'µs',
        floor: RAW_FLOOR,
        note: 'the same bash in bench/children/pty-relay.ts, bytes copied over its stdio and nothing else: the least a hop to another process costs',
        samples: trueRelay!,
      },
      { figure: FLOOD_FLOOR, unit: 'MiB/s', higherIsBetter: true, samples: floodLocal! },
      { figure: FLOOD_ROW, unit: 'MiB/s', higherIsBetter: true, floor: FLOOD_FLOOR, note: `${PAIR}, ${FLOODS} floods each`, samples: floodRemote! },
      { figure: RAW_FLOOD, unit: 'MiB/s', higherIsBetter: true, samples: floodRaw! },
      {
        figure: RAW_RELAY_FLOOD,
        unit: 'MiB/s',
        higherIsBetter: true,
        floor: RAW_FLOOD,
        note: 'the same bash behind the bare relay process: the least a hop to another process costs a flood',
        samples: floodRelay!,
      },
    ]
  } finally {
    await raw.close()
    await relay.close()
    await local.close(localId)
    await remote.close(remoteId)
  }
}

/** An open (closed before the next) on each stack, taking turns. */
async function opens(local: Stack, remote: Stack): Promise<BenchRow[]> {
  const open = (stack: Stack) => async () => {
    let id: TerminalSessionId | undefined
    const ms = await timed(async () => {
      id = await stack.open()
    })
    await stack.close(id!)
    return ms
  }
  const [openLocal, openRemote] = await collectRotating(30, [open(local), open(remote)], STEADY_WARMUP_SESSIONS)
  return [
    { figure: OPEN_FLOOR, unit: 'ms', samples: openLocal! },
    {
      figure: OPEN,
      unit: 'ms',
      floor: OPEN_FLOOR,
      note: `${PAIR}; each open closed before the next (${STEADY_WARMUP_SESSIONS} each first)`,
      samples: openRemote!,
    },
  ]
}

/** The session host's RSS growth per idle terminal, 100 open. */
async function memory(remote: Stack): Promise<BenchRow> {
  // The session host starts with the stack's first open.
  await remote.close(await remote.open())
  const runtime = remote.root.subprocess as RemoteSubprocessRuntime
  const hostPid = await runtime.sessionHostPid()
  if (hostPid === undefined) throw new Error('bench: the session host has no pid')
  const before = rssKiB(hostPid)
  const idle: TerminalSessionId[] = []
  for (let index = 0; index < IDLE_TERMINALS; index++) idle.push(await remote.open())
  const perTerminal = (rssKiB(hostPid) - before) / IDLE_TERMINALS / 1024
  for (const id of idle) await remote.close(id)
  return {
    figure: MEMORY,
    unit: 'MiB',
    note: `the session host's VmRSS with ${IDLE_TERMINALS} idle shells open, less before, divided by ${IDLE_TERMINALS}`,
    samples: [perTerminal],
  }
}

/** Resume: an agent ends (its idle session detaches), a new one adopts the session; timed is the adoption. */
async function resumes(socketPath: string): Promise<BenchRow> {
  const durable: Stack = await mount('danger-full-access', { kind: 'session-host', socketPath }, { detachedTtlMs: 600_000 })
  const samples: number[] = []
  try {
    for (let round = 0; round < RESUMES + 3; round++) {
      const id = await durable.open()
      exact(await durable.run(id, 'true'), 'dsh> ', '`true`', 'prompt')
      await durable.replaceAgent()
      const ms = await timed(async () => {
        await durable.resume(id)
      })
      if (round >= 3) samples.push(ms)
      await durable.close(id)
    }
  } finally {
    await durable.dispose()
  }
  return {
    figure: RESUME,
    unit: 'ms',
    note: `an agent ends with one idle shell (detachedTtlMs set), a new agent resumes it: the registry's adoption (target: 20 ms); ${RESUMES} rounds after 3`,
    samples,
  }
}

/**
 * Resume elsewhere: a host goes away (its stack disposed: the connection ends, the durable shell stays
 * detached in the session host), and another host, with its own connection, adopts it: list, adopt,
 * replay, rebuild. Timed is the adoption.
 */
async function resumesElsewhere(socketPath: string): Promise<BenchRow> {
  const adopter: Stack = await mount('danger-full-access', { kind: 'session-host', socketPath }, { detachedTtlMs: 600_000 })
  const samples: number[] = []
  try {
    for (let round = 0; round < ELSEWHERE_RESUMES + 2; round++) {
      const leaving: Stack = await mount('danger-full-access', { kind: 'session-host', socketPath }, { detachedTtlMs: 600_000 })
      const id = await leaving.open()
      exact(await leaving.run(id, 'true'), 'dsh> ', '`true`', 'prompt')
      await leaving.dispose()
      const ms = await timed(async () => {
        await adopter.resume(id)
      })
      exact(await adopter.run(id, 'echo resumed-$((6*7))'), 'resumed-42', 'the resumed shell')
      if (round >= 2) samples.push(ms)
      await adopter.close(id)
    }
  } finally {
    await adopter.dispose()
  }
  return {
    figure: RESUME_ELSEWHERE,
    unit: 'ms',
    note: `a host disposed with one idle durable shell, another host process's stack (its own connection) resumes it: list, adopt, replay, rebuild (target: 20 ms); ${ELSEWHERE_RESUMES} rounds after 2`,
    samples,
  }
}
