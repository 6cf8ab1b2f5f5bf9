import type { Context } from '@deepseek-ai/cordis'
import {
  type AdoptedTerminal,
  type DetachedTerminal,
  scrubEnvironment,
  SubprocessError,
  SubprocessRuntime,
  type SubprocessTerminalHandle,
  LOCAL_TARGET,
  type TerminalSpawnSpec,
  type UnreachableTarget,
  validateSpawnSpec,
  wrappedArgv,
} from 'dsh-subprocess'
import { errorMessage } from 'dsh-basics'
import type { SessionHostClient } from './client'
import type { RemoteSubprocessConfig } from './config'
import type { AdoptResult } from 'dsh-session-host'
import { RemoteTerminal } from './remote-terminal'
import { listEveryTarget } from './listing'
import { Readopter } from './readoption'
import { TargetLink } from './target-link'
import type { AppliedTerminalLimits } from 'dsh-subprocess'

/** What a spawn answers over the wire. */
interface SpawnReply {
  /** The connection's number for the terminal. */
  readonly terminal: number
  /** Its top-level process. */
  readonly pid: number
  /** The caps in force. */
  readonly limits: AppliedTerminalLimits
}

/**
 * `ctx.subprocess` backed by session hosts: terminals run there (next to their readiness proofs),
 * this side holds handles of the same contract. Each target (`local`, and the configured `targets`)
 * has one connection shared by its spawns; once it is lost, the next call connects again (starting
 * a fresh local session host when none answers).
 * Durable terminals outlive this provider: its disposal hangs up on them, and another provider of
 * the same user lists and adopts them.
 */
export class RemoteSubprocessRuntime extends SubprocessRuntime {
  private readonly config: RemoteSubprocessConfig
  /** One link per target, the default first; derived from the config once. */
  private readonly links: ReadonlyMap<string, TargetLink>
  private readonly terminals = new Set<RemoteTerminal>()
  /** The re-adopters of durable terminals, stopped when the provider goes. */
  private readonly readopters = new Set<Readopter>()
  private unreachable: readonly UnreachableTarget[] = []

  constructor(ctx: Context, config: RemoteSubprocessConfig) {
    super(ctx)
    this.config = config
    const report = (message: string) => this.ctx.logger('subprocess').warn('%s', message)
    const local = new TargetLink(LOCAL_TARGET, config.connect ? { connect: config.connect } : { socket: true }, config, report)
    const named = Object.entries(config.targets).map(([name, target]) => new TargetLink(name, { connect: target.connect }, config, report))
    const all = [local, ...named]
    const ordered = [...all.filter((link) => link.name === config.defaultTarget), ...all.filter((link) => link.name !== config.defaultTarget)]
    this.links = new Map(ordered.map((link) => [link.name, link]))
    ctx.effect(() => () => this.dispose(), 'subprocess-remote: terminate every terminal and hang up')
  }

  /** The targets a spawn may name, the default first. */
  override targetNames(): readonly string[] {
    return [...this.links.keys()]
  }

  /** A target's session host pid once connected (diagnostics and tests), from its hello. */
  async sessionHostPid(target?: string): Promise<number | undefined> {
    return (await (await this.link(target).client()).ready).pid
  }

  /** The link of `target` (default: the default target); `UNKNOWN_TARGET` names the ones there are. */
  private link(target: string | undefined): TargetLink {
    const link = this.links.get(target ?? this.config.defaultTarget)
    if (link) return link
    throw new SubprocessError(
      'UNKNOWN_TARGET',
      `no target named ${JSON.stringify(target)}; this composition's targets are ${this.targetNames()
        .map((name) => JSON.stringify(name))
        .join(', ')} (the subprocess entry's \`targets\`, and "${LOCAL_TARGET}" for this machine)`,
    )
  }

  async spawnTerminal(spec: TerminalSpawnSpec): Promise<SubprocessTerminalHandle> {
    validateSpawnSpec(spec)
    const link = this.link(spec.target)
    throwIfAborted(spec.signal)
    // The environment the in-process provider would give: this process's, scrubbed, plus the overrides.
    const env = scrubEnvironment(process.env, spec.env, { allow: this.config.envAllow })
    // Wrapper functions do not cross the wire: wrapped here, the session host runs the wrapped argv.
    const argv = spec.wrapper ? await wrappedArgv(spec.wrapper, spec.argv) : spec.argv
    throwIfAborted(spec.signal)
    const client = await link.client()
    // Checked again after the wait: an abort meanwhile fired no listener of ours.
    throwIfAborted(spec.signal)
    let requestId: number | undefined
    const cancel = () => requestId !== undefined && client.cancel(requestId)
    spec.signal?.addEventListener('abort', cancel, { once: true })
    let terminal: RemoteTerminal | undefined
    // Attached the moment the reply is read: the terminal's output frames follow it at once.
    const attach = (result: unknown) => {
      terminal = this.attach(client, result as SpawnReply, 0, spec.durable && { key: spec.durable.key, link, ttlMs: spec.durable.ttlMs })
    }
    try {
      const params = {
        argv,
        cwd: spec.cwd,
        env,
        rows: spec.rows,
        cols: spec.cols,
        graceMs: spec.graceMs,
        ...(spec.limits ? { limits: spec.limits } : {}),
        ...(spec.envFiles ? { envFiles: spec.envFiles } : {}),
        ...(spec.durable ? { durable: { key: spec.durable.key, ttlMs: spec.durable.ttlMs, retainBytes: spec.durable.retainBytes } } : {}),
      }
      await client.request('spawn', params, (id) => (requestId = id), attach)
    } finally {
      spec.signal?.removeEventListener('abort', cancel)
    }
    if (!terminal) throw new SubprocessError('SPAWN_FAILED', 'the session host answered the spawn without a terminal')
    if (spec.signal?.aborted) {
      await terminal.terminate()
      throwIfAborted(spec.signal)
    }
    return terminal
  }

  /**
   * The detached durable terminals of this user on every target, each with its target: targets not
   * connected yet are connected now, in parallel, each within `listTimeoutMs`; one that cannot be
   * reached is left out and named by {@link RemoteSubprocessRuntime.unreachableTargets}, never
   * holding the listing up. The default target's failure is the listing's.
   */
  override async listDetached(): Promise<readonly DetachedTerminal[]> {
    const listing = await listEveryTarget([...this.links.values()], this.config.listTimeoutMs)
    this.unreachable = listing.unreachable
    for (const { target, reason } of listing.unreachable) this.ctx.logger('subprocess').warn('target %s did not answer a listing: %s', target, reason)
    return listing.terminals
  }

  /** The targets the last listing could not reach, with why (empty when every one answered). */
  override unreachableTargets(): readonly UnreachableTarget[] {
    return this.unreachable
  }

  /**
   * Take a detached durable terminal over: its first output listener receives the bytes from
   * `replayFrom` on, then live output. `TERMINAL_ADOPTED` when another client won, `TERMINAL_NOT_FOUND`
   * when none is detached under `key`.
   */
  override async adoptTerminal(key: string, target?: string): Promise<AdoptedTerminal> {
    if (typeof key !== 'string' || key === '') throw new SubprocessError('INVALID_SPEC', 'the key of the terminal to adopt must be a non-empty string')
    const link = this.link(target)
    const client = await link.client()
    let handle: RemoteTerminal | undefined
    const reply = (await client.request('adopt', { key }, undefined, (result) => {
      const adopted = result as AdoptResult
      // The TTL is the spawner's and unknown here: re-adoption is bounded by readoptWithinMs alone.
      handle = this.attach(client, adopted, adopted.replayFrom, { key, link, ttlMs: undefined }, adopted.inputOffset)
    })) as AdoptResult
    if (!handle) throw new SubprocessError('SPAWN_FAILED', 'the session host answered the adoption without a terminal')
    return { handle, facts: reply.facts, replayFrom: reply.replayFrom }
  }

  /** A handle for a terminal the session host named in a reply, routed from this moment on. */
  private attach(client: SessionHostClient, reply: SpawnReply, from: number, durable: DurableRoute | undefined, inputFrom = 0): RemoteTerminal {
    // Over the local socket a lost connection is the session host's death: its terminals are gone with it.
    const readopter = durable?.link.relayed ? this.readopter(durable) : undefined
    const terminal = new RemoteTerminal({
      client,
      number: reply.terminal,
      pid: reply.pid,
      limits: reply.limits,
      ackEveryBytes: Math.max(1, Math.floor(client.windowBytes / 2)),
      report: (error) => this.ctx.logger('subprocess').warn('terminal output listener threw: %s', errorMessage(error)),
      forget: (gone) => {
        this.terminals.delete(gone)
        // Gone for good: no later try may adopt it again on the far side.
        readopter?.stop()
        if (readopter) this.readopters.delete(readopter)
      },
      durable: durable !== undefined,
      from,
      readopter,
      inputFrom,
    })
    readopter?.bind(terminal)
    client.attach(reply.terminal, terminal)
    this.terminals.add(terminal)
    return terminal
  }

  /** A durable terminal's way back after a lost link, on its own target, bounded by `readoptWithinMs` and its TTL. */
  private readopter(durable: DurableRoute): Readopter {
    const readopter = new Readopter({
      key: durable.key,
      link: durable.link,
      tryMs: this.config.startTimeoutMs,
      pauseMs: this.config.livenessMs,
      withinMs: Math.min(this.config.readoptWithinMs, durable.ttlMs ?? Number.POSITIVE_INFINITY),
    })
    this.readopters.add(readopter)
    return readopter
  }

  /** Terminate every non-durable terminal, hang up (the durable ones stay detached in the session host) and end a connect command. */
  private async dispose(): Promise<void> {
    for (const readopter of this.readopters) readopter.stop()
    const ending = [...this.terminals].filter((terminal) => !terminal.durable)
    const results = await Promise.allSettled(ending.map((terminal) => terminal.terminate()))
    await Promise.all([...this.links.values()].map((link) => link.close()))
    const failures = results.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []))
    if (failures.length > 0) throw new AggregateError(failures, `${failures.length} terminal(s) could not be cleaned up`)
  }
}

/** Where a durable terminal lives, for its re-adoption. */
interface DurableRoute {
  readonly key: string
  readonly link: TargetLink
  /** Its detached TTL when this side spawned it (the far side ends it then). */
  readonly ttlMs: number | undefined
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new SubprocessError('SPAWN_ABORTED', 'terminal spawn was aborted', { cause: signal.reason })
}
