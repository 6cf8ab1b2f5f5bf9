import { EnvAllowSchema, isTargetName, LOCAL_TARGET } from 'dsh-subprocess'
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
    /**
     * A durable terminal whose connection was lost is adopted again on a new one (the link's own
     * reconnect, or the next call) for this long after the loss, and at most its TTL; then it ends.
     */
    readoptWithinMs: z.number().int().min(0).max(MAX_TIMER_MS).default(600_000),
    /** How long a listing waits for each target besides the default (connecting to it if needed) before it names it unreachable. */
    listTimeoutMs: z.number().int().min(1).max(MAX_TIMER_MS).default(5_000),
    /** Inherited names let through the environment scrub as they are, as in dsh-subprocess-local (never `DSH_*`). */
    envAllow: EnvAllowSchema,
    /**
     * Named places to run terminals besides this machine (`local`: the per-user socket, or `connect`
     * when given), each a command whose stdin/stdout reach `dsh-session-host --stdio` there:
     * `{ "build-1": { connect: ["ssh", "build-1", "dsh-session-host", "--stdio"] } }`. A spawn names
     * one with `target`; each target has one connection, shared by its terminals.
     */
    targets: z
      .record(
        z.string().refine((name) => isTargetName(name) && name !== LOCAL_TARGET, {
          message: `a target name is 1-63 letters, digits, '.', '_' or '-', and not "${LOCAL_TARGET}" (this machine's own)`,
        }),
        z.object({ connect: z.array(z.string().min(1)).min(1) }).strict(),
      )
      .default({}),
    /** The target a spawn without `target` runs on: `local` or a name of `targets`. */
    defaultTarget: z.string().default(LOCAL_TARGET),
  })
  .prefault({})
  .refine((config) => config.defaultTarget === LOCAL_TARGET || config.defaultTarget in config.targets, {
    message: 'defaultTarget must be "local" or the name of one of targets',
    path: ['defaultTarget'],
  })

/** Parsed configuration. */
export type RemoteSubprocessConfig = z.output<typeof Config>
