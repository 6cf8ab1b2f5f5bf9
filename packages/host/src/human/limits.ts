/**
 * Output a watcher may leave unread (on its attach socket or its web stream) before the host drops
 * it instead of buffering on; its view closes and the session keeps running.
 */
export const MAX_UNREAD_BYTES = 8 * 1024 * 1024
