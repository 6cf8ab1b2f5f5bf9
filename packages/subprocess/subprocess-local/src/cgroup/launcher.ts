/** The shell that runs the join script; POSIX guarantees it, and it starts in well under a millisecond. */
export const LAUNCHER_SHELL = '/bin/sh'

/** Exit status of the launcher when it could not join a cgroup (the program was never started). */
export const JOIN_FAILED_STATUS = 125

/** Start of the line the launcher prints when a join failed; the provider turns it into `SPAWN_FAILED`. */
export const JOIN_FAILED_PREFIX = 'dsh-subprocess-local: could not join cgroup '

/**
 * Perl that closes every descriptor above 2 this process holds, or dies when it cannot list them.
 * What a PTY's first process inherits from the host is not the session's: node-pty forks the host,
 * and its fallback for marking descriptors close-on-exec stops at the first gap above 15, so without this a session could
 * read and type into every session opened before it. Used by the closer below and the warm launcher.
 */
export const CLOSE_INHERITED_PERL =
  'opendir(my $fds, "/dev/fd") or die "dsh-subprocess-local: cannot list /dev/fd: $!\\n"; ' +
  'my @open = grep { /^\\d+$/ && $_ > 2 } readdir $fds; closedir $fds; ' +
  'for my $fd (@open) { open(my $h, "<&=", $fd) and close $h }'

/** Closes what was inherited, then becomes the program (`perl -e FD_CLOSER file args…`, argv[0] the file, as node-pty's own child execs). */
export const FD_CLOSER = `${CLOSE_INHERITED_PERL} exec { $ARGV[0] } @ARGV; print STDERR "execvp(3) failed.: $!\\n"; exit 1;`

/** Where the closer's perl is looked for: system paths only, never the session's PATH. */
const CLOSER_PERLS = '/usr/bin/perl /bin/perl /usr/local/bin/perl'

// Notes whether it holds a descriptor above 2 (one the glob itself opened is gone once it ended, so
// `-e` tells the inherited ones), writes its own pid into every cgroup.procs named before `--`, then
// becomes the program (same pid, so every process the program ever forks starts inside the cgroups):
// directly when it holds nothing else, else through perl, which closes what it inherited first. Fails
// closed: no exec after a failed join, and no program with an inherited descriptor when perl is
// missing. Paths and argv arrive as arguments, never spliced into the script.
const JOIN_SCRIPT =
  'inherited=; for f in /dev/fd/*; do case ${f##*/} in 0|1|2) ;; *) [ -e "$f" ] && inherited=1 ;; esac; done; ' +
  'while [ "$1" != -- ]; do ' +
  `echo $$ > "$1" || { echo "${JOIN_FAILED_PREFIX}\${1%/cgroup.procs}; the terminal was not started" >&2; exit ${JOIN_FAILED_STATUS}; }; ` +
  'shift; done; shift; [ -z "$inherited" ] && exec "$@"; ' +
  `for perl in ${CLOSER_PERLS}; do [ -x "$perl" ] && exec "$perl" -e '${FD_CLOSER}' "$@"; done; ` +
  `echo "dsh-subprocess-local: the terminal inherited descriptors of the host and no perl (${CLOSER_PERLS}) can close them; it was not started" >&2; exit ${JOIN_FAILED_STATUS}`

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
