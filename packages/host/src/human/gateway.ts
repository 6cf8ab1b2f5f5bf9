import type { Context } from '@deepseek-ai/cordis'
import type { Agent, AgentService } from 'dsh-agent'
import { withTimeout } from 'dsh-basics'
import type { RecorderService } from 'dsh-terminal-recorder'
import type {
  TerminalHumanObserver,
  TerminalHumanPresence,
  TerminalHumanSummary,
  TerminalHumanView,
  TerminalInputState,
  TerminalSessionId,
  TerminalSessionStatus,
  TerminalSize,
} from 'dsh-terminal'
import { HUMAN_EVENT, type HumanEvent } from './events'
import { ObservedView } from './observed-view'

/** One session as a person choosing what to attach to sees it. */
export interface HumanSessionEntry {
  /** The id to attach with. */
  readonly sessionId: TerminalSessionId
  /** Its display name, when the agent gave one. */
  readonly name?: string
  /** The agent that owns it (one per MCP client). */
  readonly ownerId: string
  /** Backend type (`shell`). */
  readonly type: string
  /** Whether the shell still runs. */
  readonly status: TerminalSessionStatus
  /** Window size, when it has a terminal. */
  readonly size?: TerminalSize
  /** Someone already attached: watching, or typing lately. */
  readonly human?: TerminalHumanPresence
  /** How many people are attached and whether the one who took over types (what a refusal to take over will say). */
  readonly people?: TerminalHumanSummary
  /** What the terminal waits for now (prompt, password, program …), when it can be told. */
  readonly input?: TerminalInputState
}

/** A session the gateway cannot find among its agents' sessions. */
export class HumanGatewayError extends Error {
  constructor(
    /** `NO_SESSION`: no live agent of this host owns it; `NO_TERMINALS`: the composition has no dsh-terminal. */
    readonly code: 'NO_SESSION' | 'NO_TERMINALS',
    message: string,
  ) {
    super(message)
    this.name = 'HumanGatewayError'
  }
}

/**
 * Where a person's view comes from, as the agent's `HUMAN_ACTIVE` and another person's
 * `HUMAN_WRITER_TAKEN` name it, so both know where to look for them.
 */
export const HUMAN_CLIENTS = {
  web: 'the web view in a browser',
  attach: 'a terminal (dsh-terminal attach)',
} as const

/** How long one session's input state may take before its entry is listed without it. */
const INPUT_STATE_WAIT_MS = 2000

/**
 * The host's door for a person: it lists every session of every agent this host created, and opens
 * a view of one as its owner (through `ctx.terminals.observeAsHuman`). Attach servers (the Unix
 * socket, the web view) talk to this, never to the registry, so no lower layer knows about them.
 */
export class HumanGateway {
  constructor(private readonly root: Context) {}

  /**
   * Every live session, in agent then publication order, with its input state (inspected now, all
   * at once; one that fails or takes longer than {@link INPUT_STATE_WAIT_MS} is listed without it).
   */
  async sessions(): Promise<HumanSessionEntry[]> {
    const terminals = this.#terminals()
    if (!terminals) return []
    const pending: Promise<HumanSessionEntry>[] = []
    for (const agent of this.#agents()) {
      let snapshots
      try {
        snapshots = terminals.list(agent)
      } catch {
        continue // the agent ended meanwhile
      }
      for (const snapshot of snapshots) {
        // Read with the snapshot, so `people` and `human` tell of the same moment.
        const people = snapshot.human === undefined ? undefined : peopleOf(terminals, agent, snapshot.sessionId)
        const looked = Promise.resolve()
          .then(() => terminals.inputState(agent, snapshot.sessionId))
          .catch(() => undefined)
        pending.push(
          withTimeout(looked, INPUT_STATE_WAIT_MS, () => undefined).then((input) => ({
            ...snapshot,
            ownerId: agent.id,
            ...(people ? { people } : {}),
            ...(input ? { input } : {}),
          })),
        )
      }
    }
    return await Promise.all(pending)
  }

  /**
   * Open a person's view of `sessionId` for the agent that owns it, from `client` (one of
   * {@link HUMAN_CLIENTS}); `NO_SESSION` when none of this host's agents does. What the person does
   * with it (attach, take over, submit a line at a password prompt, release, leave) is emitted on the
   * root context as `dsh/human` events (see `HumanEvent`), never what they typed.
   */
  async attach(sessionId: string, observer: TerminalHumanObserver, client: string): Promise<TerminalHumanView> {
    const terminals = this.#terminals()
    if (!terminals) throw new HumanGatewayError('NO_TERMINALS', 'this host serves no terminal sessions (its composition has no dsh-terminal)')
    const owner = this.#ownerOf(sessionId)
    if (!owner) throw new HumanGatewayError('NO_SESSION', `no session ${sessionId} on this host; run \`dsh-terminal attach\` to list them`)
    const id = sessionId as TerminalSessionId
    const watch = {
      agentId: owner.id,
      client,
      emit: (event: HumanEvent) => this.root.emit(HUMAN_EVENT, event),
      inputState: () => terminals.inputState(owner, id),
    }
    return await ObservedView.open(watch, observer, (wrapped) => terminals.observeAsHuman(owner, id, wrapped, { client }))
  }

  #ownerOf(sessionId: string): Agent | undefined {
    const terminals = this.#terminals()
    for (const agent of this.#agents()) {
      try {
        if (terminals?.list(agent).some((snapshot) => snapshot.sessionId === sessionId)) return agent
      } catch {
        // An agent that ended meanwhile owns nothing.
      }
    }
    return undefined
  }

  /** The composition's flight recorder (`ctx.recorder`), when it mounts one: the web player reads recordings through it. */
  recorder(): RecorderService | undefined {
    return this.root.get('recorder') as RecorderService | undefined
  }

  #agents(): Agent[] {
    return (this.root.get('agents') as AgentService | undefined)?.list() ?? []
  }

  #terminals(): Context['terminals'] | undefined {
    return this.root.get('terminals') as Context['terminals'] | undefined
  }
}

/** Who is on `sessionId` now; `undefined` when the session went away meanwhile. */
function peopleOf(terminals: Context['terminals'], agent: Agent, sessionId: TerminalSessionId): TerminalHumanSummary | undefined {
  try {
    return terminals.humans(agent, sessionId)
  } catch {
    return undefined
  }
}
