/**
 * The message of a thrown value, for a log line, an aggregate error or a model-visible
 * `Error: <message>`: an Error's message (its name when the message is empty), a string as it is,
 * anything else as JSON where it can be (a throw can carry any value; `catch` types it `unknown`).
 */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name
  if (typeof error === 'string') return error
  try {
    return JSON.stringify(error) ?? String(error)
  } catch {
    return String(error)
  }
}
