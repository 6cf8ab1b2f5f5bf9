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
//
// First, when a host-death watchdog runs (its registration directory, then the host's pid, lead the
// arguments; `-` when none), it registers itself there: a file named by its pid holding its start
// identity. Then it reads its parent afresh ($PPID is fixed at startup) and exits unless that is still
// the host. So a host killed between its fork and its own registration (a session host forking a burst
// of spawns) either died first (the launcher exits before the program starts) or after the file (the
// watchdog reads the directory once the host is gone, and takes the tree down by its session id).
// No fork: builtins only.
const JOIN_SCRIPT =
  'inherited=; for f in /dev/fd/*; do case ${f##*/} in 0|1|2) ;; *) [ -e "$f" ] && inherited=1 ;; esac; done; ' +
  'registry=$1 host=$2; shift 2; if [ "$registry" != - ]; then ' +
  "stat() { stat=; { read -r stat < /proc/self/stat; } 2>/dev/null; IFS=' '; set -- ${stat##*) }; parent=$2 start=${20}; }; stat; " +
  '{ echo "$start" > "$registry/$$"; } 2>/dev/null; ' +
  `stat; [ "$parent" = "$host" ] || exit ${JOIN_FAILED_STATUS}; fi; ` +
  'while [ "$1" != -- ]; do ' +
  `echo $$ > "$1" || { echo "${JOIN_FAILED_PREFIX}\${1%/cgroup.procs}; the terminal was not started" >&2; exit ${JOIN_FAILED_STATUS}; }; ` +
  'shift; done; shift; [ -z "$inherited" ] && exec "$@"; ' +
  `for perl in ${CLOSER_PERLS}; do [ -x "$perl" ] && exec "$perl" -e '${FD_CLOSER}' "$@"; done; ` +
  `echo "dsh-subprocess-local: the terminal inherited descriptors of the host and no perl (${CLOSER_PERLS}) can close them; it was not started" >&2; exit ${JOIN_FAILED_STATUS}`

/** What node-pty spawns instead of the program itself. */
export interface LauncherCommand {
  /** The launcher shell. */
  readonly file: string
  /** Its arguments: the join script, the watchdog's registration directory and the host's pid, the `cgroup.procs` files, `--`, then the program and its arguments. */
  readonly args: string[]
}

/** The host-death watchdog a PTY's first process registers itself with before it runs the program. */
export interface LaunchGuard {
  /** The watchdog's registration directory (private to this user; see `HostWatchdog.registry`). */
  readonly registry: string
  /** The host's pid: the launcher's parent, which it checks is still alive after registering. */
  readonly hostPid: number
}

/**
 * Prefix a resolved program with the join launcher. Joining from inside, before exec, is what makes
 * the limits cover everything: moving the pid from outside after spawn would race the program's
 * first forks (bwrap forks at once). With `guard`, the launcher registers itself with the watchdog first.
 */
export function launcherCommand(procsFiles: readonly string[], file: string, args: readonly string[], guard?: LaunchGuard): LauncherCommand {
  const watched = guard ? [guard.registry, String(guard.hostPid)] : ['-', '-']
  return { file: LAUNCHER_SHELL, args: ['-c', JOIN_SCRIPT, 'dsh-cgroup-join', ...watched, ...procsFiles, '--', file, ...args] }
}

/**
 * The launcher's failure report from the terminal's first output and its exit status, or
 * `undefined` when the exit was the program's own (it joined, ran and ended at once).
 */
export function joinFailure(exitCode: number | null, output: string): string | undefined {
  if (exitCode !== JOIN_FAILED_STATUS || !output.includes(JOIN_FAILED_PREFIX)) return undefined
  return output.replace(/\r/g, '').trim().split('\n').join('; ')
}
