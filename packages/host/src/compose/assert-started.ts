import type { Loader } from '@deepseek-ai/cordis-plugin-loader'
import { errorMessage } from 'dsh-basics'

/** Fiber states (a const enum in Cordis, not importable at runtime). */
const PENDING = 0
const ACTIVE = 2
const STATE_NAMES = ['pending', 'loading', 'active', 'failed', 'disposed', 'unloading']

/**
 * Await every loader entry (nested includes too) and list each enabled entry that is not active:
 * a module that did not import, a config or apply that failed, or a plugin still waiting for a
 * service. The loader itself only logs these; a host must refuse to run half a composition.
 */
export async function startupFailures(loader: Loader): Promise<string[]> {
  await loader.await()
  const failures: string[] = []
  for (const entry of loader.entries()) {
    if (entry.disabled) continue
    const label = `${entry.options.id} (${entry.options.name})`
    const fiber = entry.fiber
    if (!fiber) {
      failures.push(`${label}: module did not load`)
      continue
    }
    try {
      await fiber.await()
    } catch (error) {
      failures.push(`${label}: ${errorMessage(error)}`)
      continue
    }
    if (fiber.state === PENDING) {
      const missing = Object.keys(fiber.inject).filter((name) => fiber.ctx.get(name) === undefined)
      failures.push(`${label}: waiting for services ${missing.join(', ') || '(unknown)'}`)
    } else if (fiber.state !== ACTIVE) {
      failures.push(`${label}: ${STATE_NAMES[fiber.state] ?? fiber.state}`)
    }
  }
  return failures
}
