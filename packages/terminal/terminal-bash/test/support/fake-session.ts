import { vi } from 'vitest'
import { parseConfig, type ShellBackendConfigInput } from '../../src/config'
import { ShellSession } from '../../src/session/shell-session'
import { FakeTerminal, NONCE, prompt, REPL_NONCE } from './fake-terminal'

/** Timing used by fake-handle tests (fake timers make the absolute values irrelevant). */
export const FAKE_CONFIG: ShellBackendConfigInput = {
  timeoutMs: 10_000,
  idleSilenceMs: 3_000,
  handoffGraceMs: 500,
  pollIntervalMs: 50,
  cancelGraceMs: 500,
}

/** Advance fake time (and run every callback due by then, immediates included). */
export function tick(ms = 0): Promise<unknown> {
  return vi.advanceTimersByTimeAsync(ms)
}

/** A session over a fake handle, already past startup (the fake printed a banner and the prompt). */
export async function openFake(config: ShellBackendConfigInput = {}): Promise<{ fake: FakeTerminal; session: ShellSession }> {
  const fake = new FakeTerminal()
  const session = new ShellSession(fake, parseConfig({ ...FAKE_CONFIG, ...config }), { nonce: NONCE, replNonce: REPL_NONCE })
  fake.emit(`welcome\r\n${prompt(0)}`)
  const started = session.startup(new AbortController().signal)
  await tick(5)
  await started
  return { fake, session }
}

/** Whether a promise has settled, without waiting for it. */
export async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false
  promise.then(
    () => (settled = true),
    () => (settled = true),
  )
  await Promise.resolve()
  await Promise.resolve()
  return settled
}

/**
 * Output arrives after the last send ended (a background job's line): the session no longer knows
 * the shell to be idle at its prompt, so the next send inspects before it writes.
 */
export function disturb(fake: FakeTerminal, text = '[1]+  Done  sleep 1\r\n'): void {
  fake.emit(text)
}
