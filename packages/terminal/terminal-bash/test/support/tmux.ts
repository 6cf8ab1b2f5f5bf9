import { execFileSync } from 'node:child_process'

/** Run one tmux command (tmux is the ground truth for a screen) and answer what it printed. */
export function tmux(...args: string[]): string {
  return execFileSync('tmux', args, { encoding: 'utf8' })
}

/**
 * Poll `capture` until it differs from `before` and then holds still for a few reads (bounded at
 * about 8 s): tmux has drawn what the last keys did.
 */
export function settled(capture: () => string, before?: string): string {
  let last = capture()
  let still = 0
  for (let attempt = 0; attempt < 400 && (last === before || still < 5); attempt++) {
    execFileSync('sleep', ['0.02'])
    const next = capture()
    still = next === last ? still + 1 : 0
    last = next
  }
  return last
}
