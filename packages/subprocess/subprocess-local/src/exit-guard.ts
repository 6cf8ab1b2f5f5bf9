/** Synchronous cleanup run when this Node.js process exits. */
export type ExitCleanup = () => void

const cleanups = new Set<ExitCleanup>()
let installed = false

/**
 * Run `cleanup` synchronously if this Node.js process exits while it is registered (one shared
 * `exit` listener for every terminal). Returns the function that unregisters it.
 */
export function onProcessExit(cleanup: ExitCleanup): () => void {
  if (!installed) {
    installed = true
    process.on('exit', runCleanups)
  }
  cleanups.add(cleanup)
  return () => {
    cleanups.delete(cleanup)
  }
}

function runCleanups(): void {
  for (const cleanup of [...cleanups]) {
    cleanups.delete(cleanup)
    try {
      cleanup()
    } catch {
      // Exiting anyway: one failed tree must not spare the others.
    }
  }
}
