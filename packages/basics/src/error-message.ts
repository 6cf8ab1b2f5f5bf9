/**
 * The message of a thrown value for a log line or an aggregate error: an Error's message, anything
 * else as `String(value)` (a throw can carry any value, and `catch` types it `unknown`).
 */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
