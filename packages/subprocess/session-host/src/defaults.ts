/** Unacknowledged output per terminal before the session host pauses its PTY (1 MiB). */
export const DEFAULT_WINDOW_BYTES = 1024 * 1024

/** How long a session host with no client waits before it exits by itself. */
export const DEFAULT_IDLE_EXIT_MS = 30_000

/** Terminals one session host holds at most (every connection's, detached ones included). */
export const DEFAULT_MAX_TERMINALS = 256
