// MCP over Streamable HTTP (`dsh-terminal mcp --http`) against direct `ctx.tools` calls on the same
// composition in the same process (the floor), with MCP over the SDK's in-memory transport between
// them: what the protocol costs, and what HTTP adds on top.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { Agent } from 'dsh-agent'
import { descendants, eventually, identify, stillRunning } from 'dsh-testkit'
import { type Composition, generateToken, loadComposition, McpHttpServer } from '../../packages/host/src/index'
// The SDK client resolves through the host package (the root has no dependency on the SDK).
import { callTool, connectHttp, connectInMemory } from '../../packages/host/test/mcp-clients'
import { collectInterleaved, timed } from '../lib/measure'
import type { BenchRow } from '../lib/types'

const CONFIG = new URL('../../cordis.yml', import.meta.url).pathname
const CLI = new URL('../../packages/host/src/cli.ts', import.meta.url).pathname
const CLIENTS = 50
const SENDS = 20
const ROUNDS = 3
const ROUND_TRIPS = 200
/** A round that takes longer than this fails the suite instead of hanging it. */
const ROUND_BOUND_MS = 120_000

/** One client of a workload: call a tool (failures throw), then end the client (its agent ends). */
interface Caller {
  call(name: string, args: Record<string, unknown>): Promise<{ text: string; meta: Record<string, unknown> }>
  end(): Promise<void>
}

/** The floor: a fresh agent calling `ctx.tools.execute` directly, no protocol and no transport. */
async function toolsCaller(composition: Composition): Promise<Caller> {
  const agent: Agent = await composition.agents.create()
  let next = 0
  return {
    async call(name, args) {
      const result = await composition.tools.execute({ callId: `bench-${next++}`, name, arguments: args, agent })
      const text = result.content.map((block) => block.text).join('\n')
      if (result.isError) throw new Error(`${name} failed: ${text}`)
      return { text, meta: result.meta ?? {} }
    },
    end: () => agent.dispose(),
  }
}

/** The SDK client on the in-memory transport: one MCP connection (= one agent), no HTTP. */
async function memoryCaller(composition: Composition): Promise<Caller> {
  const { client, connection } = await connectInMemory(composition)
  return {
    call: (name, args) => checked(callTool(client, name, args), name),
    async end() {
      await client.close()
      await connection.closed
    },
  }
}

/** The SDK client over Streamable HTTP: one MCP session (= one agent), ended with DELETE. */
async function httpCaller(url: string, token: string): Promise<Caller> {
  const { client, transport } = await connectHttp(url, token)
  return {
    call: (name, args) => checked(callTool(client, name, args), name),
    async end() {
      await transport.terminateSession()
      await client.close()
    },
  }
}

async function checked(result: ReturnType<typeof callTool>, name: string): Promise<{ text: string; meta: Record<string, unknown> }> {
  const { isError, text, meta } = await result
  if (isError) throw new Error(`${name} failed: ${text}`)
  return { text, meta }
}

/** What a send of `echo <word>` must return, byte for byte. */
function echoed(word: string): string {
  return `echo ${word}\n${word}\ndsh> \n[wait: stdin_read]\n[input: prompt]\n[exit: 0]\n[session: running]`
}

async function echo(caller: Caller, sessionId: string, word: string): Promise<void> {
  const { text } = await caller.call('terminal_send', { sessionId, text: `echo ${word}` })
  if (text !== echoed(word)) throw new Error(`bench: echo ${word} returned ${JSON.stringify(text)}`)
}

/** One client's work: open a shell, 20 echoes checked exactly, close, end the client. */
async function workload(caller: Caller, client: number): Promise<void> {
  const sessionId = (await caller.call('terminal_open', { type: 'shell' })).meta.sessionId as string
  for (let send = 0; send < SENDS; send++) await echo(caller, sessionId, `c${client}-s${send}`)
  await caller.call('terminal_close', { sessionId })
  await caller.end()
}

/** 50 clients at once, each {@link workload}; fails if a round outlives {@link ROUND_BOUND_MS}. */
function round(connect: () => Promise<Caller>): Promise<number> {
  let timer: NodeJS.Timeout | undefined
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`bench: a round of ${CLIENTS} clients took over ${ROUND_BOUND_MS} ms`)), ROUND_BOUND_MS)
  })
  const run = timed(() => Promise.all(Array.from({ length: CLIENTS }, async (_, client) => workload(await connect(), client))))
  return Promise.race([run, bound]).finally(() => clearTimeout(timer))
}

/** V8's collector, so memory is read after a full GC rather than wherever the heap happens to be. */
function collector(): () => void {
  setFlagsFromString('--expose-gc')
  return runInNewContext('gc') as () => void
}

const mib = (bytes: number) => `${(bytes / 1_048_576).toFixed(0)} MiB`

/** CPU milliseconds (user + system) a process has used, from /proc (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** Resident memory of a process, from /proc. */
function rssBytes(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024
}

/**
 * The real host: `dsh-terminal mcp --http 127.0.0.1:0` as a child process (this runtime, from
 * sources), driven by 50 clients in this process. Host CPU per round against the CPU this process
 * spends on the same rounds on `ctx.tools`; the host's RSS before and after.
 */
async function childHost(composition: Composition, clean: () => void, baseline: Set<string>): Promise<BenchRow[]> {
  const token = generateToken()
  const child = spawn(process.execPath, [...process.execArgv, CLI, 'mcp', '--http', '127.0.0.1:0', '--config', CONFIG], {
    env: { ...process.env, DSH_TERMINAL_TOKEN: token },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  try {
    const url = await eventually(() => /listening on (\S+)/.exec(stderr)?.[1], 'the HTTP host to listen', 60_000)
    const pid = child.pid!
    const identity = identify(pid)!
    baseline.add(`${identity.pid}:${identity.started}`) // the host itself is not a leftover of the floor's rounds
    const idle = () => {
      if (descendants(pid).some(stillRunning)) throw new Error('bench: the HTTP host kept a process after a round')
    }
    const samples = { floor: [] as number[], host: [] as number[], wall: [] as number[] }
    const before = rssBytes(pid)
    for (let index = -1; index < ROUNDS; index++) {
      const cpu = process.cpuUsage()
      await round(() => toolsCaller(composition))
      const used = process.cpuUsage(cpu)
      clean()
      const start = cpuMs(pid)
      const wall = await round(() => httpCaller(url, token))
      const host = cpuMs(pid) - start
      idle()
      if (index < 0) continue
      samples.floor.push((used.user + used.system) / 1000)
      samples.host.push(host)
      samples.wall.push(wall)
    }
    const after = rssBytes(pid)
    child.kill('SIGTERM')
    const code = await exited
    if (code !== 0) throw new Error(`bench: the HTTP host exited ${code} on SIGTERM:\n${stderr}`)
    const floor = `host CPU: ctx.tools, ${CLIENTS} × (open, ${SENDS} echoes, close)`
    return [
      { figure: floor, unit: 'ms', samples: samples.floor },
      {
        figure: `host CPU: \`mcp --http\` process, same workload`,
        unit: 'ms',
        floor,
        samples: samples.host,
        note: `clients in the bench process; wall time per round p50 ${Math.round([...samples.wall].sort((a, b) => a - b)[1]!)} ms; host RSS ${mib(before)} before the rounds, ${mib(after)} after ${ROUNDS + 1}; exit 0 on SIGTERM`,
      },
    ]
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL')
    await exited
  }
}

/**
 * One echo round trip (1 client, sequential), then 50 clients × (open, 20 echoes, close) at once,
 * over HTTP, over in-memory MCP and on `ctx.tools`, rotating which goes first every round.
 */
export async function http(): Promise<BenchRow[]> {
  const gc = collector()
  const baseline = new Set(descendants(process.pid).map((member) => `${member.pid}:${member.started}`))
  const composition = await loadComposition({ configPath: CONFIG, log: () => {} })
  const token = generateToken()
  const server = await McpHttpServer.start(composition, { address: { host: '127.0.0.1', port: 0 }, token })
  /** Nothing a round started may survive it: no session, no agent, no process. */
  const clean = (): void => {
    const left = descendants(process.pid).filter((member) => !baseline.has(`${member.pid}:${member.started}`) && stillRunning(member))
    if (left.length || server.sessionCount || composition.agents.list().length) {
      throw new Error(`bench: left behind ${left.length} processes, ${server.sessionCount} sessions, ${composition.agents.list().length} agents`)
    }
  }
  const memory = (): string => {
    gc()
    const { rss, heapUsed } = process.memoryUsage()
    return `RSS ${mib(rss)} (heap ${mib(heapUsed)})`
  }
  try {
    const rows: BenchRow[] = []
    const direct = await toolsCaller(composition)
    const remote = await httpCaller(server.url, token)
    const [directId, remoteId] = await Promise.all(
      [direct, remote].map(async (caller) => (await caller.call('terminal_open', { type: 'shell' })).meta.sessionId as string),
    )
    let trip = 0
    const trips = await collectInterleaved(
      ROUND_TRIPS,
      async () => (await timed(() => echo(direct, directId!, `t${trip++}`))) * 1000,
      async () => (await timed(() => echo(remote, remoteId!, `t${trip++}`))) * 1000,
      20,
    )
    await direct.end()
    await remote.end()
    clean()
    rows.push({ figure: 'ctx.tools: one echo round trip', unit: 'µs', samples: trips.floor })
    rows.push({ figure: 'HTTP: one echo round trip (1 client)', unit: 'µs', floor: 'ctx.tools: one echo round trip', samples: trips.contender })

    const runners = [
      { name: 'tools', connect: () => toolsCaller(composition) },
      { name: 'memory', connect: () => memoryCaller(composition) },
      { name: 'http', connect: () => httpCaller(server.url, token) },
    ]
    const samples: Record<string, number[]> = { tools: [], memory: [], http: [] }
    const before = memory()
    for (let index = -1; index < ROUNDS; index++) {
      // Round -1 warms up; then each round starts with a different contender.
      const order = runners.map((_, offset) => runners[(Math.max(index, 0) + offset) % runners.length]!)
      for (const runner of order) {
        const elapsed = await round(runner.connect)
        clean()
        if (index >= 0) samples[runner.name]!.push(elapsed)
      }
    }
    const after = memory()
    const floor = `ctx.tools: ${CLIENTS} agents × (open, ${SENDS} echoes, close), concurrent`
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
    rows.push({ figure: floor, unit: 'ms', samples: samples.tools! })
    rows.push({ figure: `MCP in-memory: ${CLIENTS} clients × (same), concurrent`, unit: 'ms', floor, samples: samples.memory! })
    rows.push({
      figure: `HTTP: ${CLIENTS} clients × (same), concurrent`,
      unit: 'ms',
      floor,
      samples: samples.http!,
      note:
        `${(median(samples.http!) / median(samples.memory!)).toFixed(2)}× in-memory MCP; ${CLIENTS * (SENDS + 2)} tool calls a round, every echo exact, ` +
        `no process, session or agent left after any round; this process (server and all clients) after a full GC: ${before} before the rounds, ${after} after ${ROUNDS + 1} of each`,
    })
    rows.push(...(await childHost(composition, clean, baseline)))
    return rows
  } finally {
    await server.close()
    await composition.dispose()
  }
}
