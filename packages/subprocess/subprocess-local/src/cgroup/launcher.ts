/** The shell that runs the join script; POSIX guarantees it, and it starts in well under a millisecond. */
export const LAUNCHER_SHELL = '/bin/sh'

/** Exit status of the launcher when it could not join a cgroup (the program was never started). */
export const JOIN_FAILED_STATUS = 125

/** Start of the line the launcher prints when a join failed; the provider turns it into `SPAWN_FAILED`. */
export const JOIN_FAILED_PREFIX = 'dsh-subprocess-local: could not join cgroup '

// Writes its own pid into every cgroup.procs named before `--`, then becomes the program (same pid,
// so every process the program ever forks starts inside the cgroups). Fails closed: no exec after a
// failed join. Paths and argv arrive as arguments, never spliced into the script.
const JOIN_SCRIPT =
  'while [ "$1" != -- ]; do ' +
  `echo $$ > "$1" || { echo "${JOIN_FAILED_PREFIX}\${1%/cgroup.procs}; the terminal was not started" >&2; exit ${JOIN_FAILED_STATUS}; }; ` +
  'shift; done; shift; exec "$@"'

/** What node-pty spawns instead of the program itself. */
export interface LauncherCommand {
  /** The launcher shell. */
  readonly file: string
  /** Its arguments: the join script, the `cgroup.procs` files, `--`, then the program and its arguments. */
  readonly args: string[]
}

/**
 * Prefix a resolved program with the join launcher. Joining from inside, before exec, is what makes
 * the limits cover everything: moving the pid from outside after spawn would race the program's
 * first forks (bwrap forks at once).
 */
export function launcherCommand(procsFiles: readonly string[], file: string, args: readonly string[]): LauncherCommand {
  return { file: LAUNCHER_SHELL, args: ['-c', JOIN_SCRIPT, 'dsh-cgroup-join', ...procsFiles, '--', file, ...args] }
}

/**
 * The launcher's failure report from the terminal's first output and its exit status, or
 * `undefined` when the exit was the program's own (it joined, ran and ended at once).
 */
export function joinFailure(exitCode: number | null, output: string): string | undefined {
  if (exitCode !== JOIN_FAILED_STATUS || !output.includes(JOIN_FAILED_PREFIX)) return undefined
  return output.replace(/\r/g, '').trim().split('\n').join('; ')
}
