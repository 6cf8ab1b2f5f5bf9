import { EnvAllowSchema } from 'dsh-subprocess'
import { MAX_TIMER_MS } from 'dsh-basics'
import { z } from 'zod'

/** Configuration of `dsh-subprocess-remote`; every field has a default. */
export const Config = z
  .object({
    /**
     * A command whose stdin/stdout reach `dsh-session-host --stdio` (ssh, `kubectl exec`, …). Absent:
     * the local per-user socket, starting the session host on first use.
     */
    connect: z.array(z.string().min(1)).min(1).optional(),
    /** The local session host's socket (default `/tmp/dsh-terminal/<uid>/session-host.sock`). */
    socketPath: z.string().min(1).optional(),
    /** How a session host started on first use is run (default: the `dsh-session-host` bin of this install). */
    sessionHostCommand: z.array(z.string().min(1)).min(1).optional(),
    /** A session host started on first use exits after this long with no client and no terminal. */
    idleExitMs: z.number().int().min(0).max(MAX_TIMER_MS).default(30_000),
    /** How long starting the session host and connecting to it may take before a spawn fails. */
    startTimeoutMs: z.number().int().min(1).max(MAX_TIMER_MS).default(15_000),
    /**
     * Liveness: with calls pending or terminals attached and nothing heard for this long, ping; no
     * answer within as long again and the connection is lost with `TARGET_UNREACHABLE`.
     */
    livenessMs: z.number().int().min(10).max(MAX_TIMER_MS).default(5_000),
    /** Inherited names let through the environment scrub as they are, as in dsh-subprocess-local (never `DSH_*`). */
    envAllow: EnvAllowSchema,
  })
  .prefault({})

/** Parsed configuration. */
export type RemoteSubprocessConfig = z.output<typeof Config>
