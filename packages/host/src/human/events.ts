/** What a person did with a session through the host's gateway (the attach socket or the web view). */
export const HUMAN_EVENT_KINDS = ['attach', 'takeover', 'release', 'secret_handoff', 'detach'] as const

/** One of {@link HUMAN_EVENT_KINDS}. */
export type HumanEventKind = (typeof HUMAN_EVENT_KINDS)[number]

/**
 * One thing a person did, as the gateway reports it on the composition's root context (event
 * {@link HUMAN_EVENT}). It never carries what the person typed: `secret_handoff` only says that a
 * line was submitted while the terminal asked for a password (echo off).
 */
export interface HumanEvent {
  readonly kind: HumanEventKind
  /** The session watched or typed into. */
  readonly sessionId: string
  /** The agent that owns the session. */
  readonly agentId: string
  /** Where the person is (`HUMAN_CLIENTS`: the web view, or a terminal with `dsh-terminal attach`). */
  readonly client: string
  /** For `attach`: whether the view is the session's writer already (it is not, until it takes over). */
  readonly writer?: boolean
  /** For `secret_handoff`: the program that asked, when the terminal could tell (`sudo`, `bash` for `read -s`). */
  readonly program?: string
}

/** The Cordis event name the gateway emits {@link HumanEvent}s under. */
export const HUMAN_EVENT = 'dsh/human'

declare module '@deepseek-ai/cordis' {
  interface Events {
    /** A person attached to, took over, typed a secret into, released or left a session (see `HumanEvent`). */
    'dsh/human'(event: HumanEvent): void
  }
}
