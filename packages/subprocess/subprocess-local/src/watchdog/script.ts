/** The shell that runs the watchdog script (the cgroup launcher's shell too); POSIX guarantees it. */
export const WATCHDOG_SHELL = '/bin/sh'

/** `argv[0]` of the watchdog process, so `ps` shows what it is (its first argument is the host's pid). */
export const WATCHDOG_NAME = 'dsh-subprocess-watchdog'

/**
 * How many kill passes the watchdog makes at most before it gives up (about 10 ms apart): a pass
 * that finds nothing left ends the sweep at once, so this bounds only a sweep that cannot win.
 */
export const WATCHDOG_MAX_PASSES = 300

/**
 * One line on the watchdog's stdin per event (fields separated by one space):
 * `cgroup <dir>` / `uncgroup <dir>`: a runtime's parent cgroup, whose session directories are
 * emptied and removed, then itself; `session <pid> <start> <pts|->` / `unsession <pid>`: a terminal
 * whose top-level process (a session leader) has start identity `<start>` and PTY `<pts>`.
 */
export type WatchdogLine = `cgroup ${string}` | `uncgroup ${string}` | `session ${number} ${string} ${string}` | `unsession ${number}`

/**
 * The watchdog (POSIX sh, no forks while it waits). It records what the host registers, and once
 * its stdin reads EOF — the host closed it, or the host is gone, however it died — it adds the
 * terminals whose launchers registered themselves in its registration directory (its second
 * argument; see `launcherCommand`), removes that directory, and kills, in passes until one finds nothing:
 * - every process in a registered parent's session cgroups, after stopping forks there
 *   (`cgroup.kill` on v2, `pids.max` 0 where the pids controller is attached);
 * - every process in a registered terminal's session (`sid` = its pid, started no earlier than
 *   it), unless that pid now names another process (alive with another start identity), and the
 *   terminal's top-level process itself by its identity (a child forked but not yet past `setsid()`);
 * - every process holding the terminal's PTY as stdin, stdout or stderr that started between the
 *   terminal and the moment the host was seen gone (a `setsid` child that kept the terminal;
 *   the bound keeps a PTY number reused after the host died from naming strangers), judged by the
 *   text of its fd links, read with one `ls -l` per pass.
 * A pass scans /proc only once the cgroups are quiet (cgroup.procs is small; /proc is every
 * process). Then it removes the session cgroups and the parents, and exits. Zombies count as gone.
 */
export const WATCHDOG_SCRIPT = `
nl='
'
set -f
registry=$2
cgroups=''
sessions=''
hz=$(getconf CLK_TCK 2>/dev/null) || hz=100
case $hz in ''|*[!0-9]*) hz=100 ;; esac

# forget <list variable> <line to drop> <prefix match: 1|0>
forget() {
  eval "forget_list=\\$$1"
  forget_kept=''
  IFS=$nl
  for forget_line in $forget_list; do
    case $3 in
      1) case $forget_line in "$2 "*) continue ;; esac ;;
      *) [ "$forget_line" = "$2" ] && continue ;;
    esac
    forget_kept=$forget_kept$forget_line$nl
  done
  IFS=' '
  eval "$1=\\$forget_kept"
}

# stat_of <pid>: sets state, sid and start from /proc/<pid>/stat (fields after the last ") ").
stat_of() {
  stat_line=''
  { read -r stat_line < "/proc/$1/stat"; } 2>/dev/null
  [ -n "$stat_line" ] || return 1
  IFS=' '
  set -- \${stat_line##*) }
  state=$1 sid=$4 start=\${20}
  case $state in Z|X) return 1 ;; esac
  return 0
}

slay() {
  [ "$1" = "$$" ] && return
  kill -9 "$1" 2>/dev/null && found=1
}

cgroup_pass() {
  IFS=$nl
  for parent in $cgroups; do
    set +f
    for dir in "$parent"/*/; do
      [ -f "$dir"cgroup.procs ] || continue
      { [ -f "$dir"cgroup.kill ] && echo 1 > "$dir"cgroup.kill; } 2>/dev/null
      { [ -f "$dir"pids.max ] && echo 0 > "$dir"pids.max; } 2>/dev/null
      while read -r pid; do
        stat_of "$pid" && slay "$pid"
      done < "$dir"cgroup.procs
    done
    set -f
    IFS=$nl
  done
  IFS=' '
}

# session_pass: the sid rule kills at once; processes in a terminal's time window are candidates for
# the PTY rule, whose fds are read in one \`ls -l\` (after the master closed, a link reads
# "/dev/pts/N (deleted)", and no other terminal can take number N while one of them holds it).
session_pass() {
  [ -n "$sessions" ] || return
  candidates=''
  set +f
  for file in /proc/[0-9]*/stat; do
    pid=\${file#/proc/}
    pid=\${pid%/stat}
    stat_of "$pid" || continue
    IFS=$nl
    for entry in $sessions; do
      IFS=' '
      set -f
      set -- $entry
      [ "$start" -ge "$2" ] 2>/dev/null || continue
      # The leader itself by its identity too: forked but not yet past setsid(), it is still in the
      # host's session, and it would go on to start the whole tree after this sweep ended.
      if [ "$sid" = "$1" ] || [ "$pid" = "$1" ]; then
        member_start=$start
        if ! stat_of "$1" || [ "$start" = "$2" ]; then
          slay "$pid"
          break
        fi
        start=$member_start
      fi
      if [ "$3" != - ] && [ "$start" -le "$death" ]; then
        candidates="$candidates /proc/$pid/fd/0 /proc/$pid/fd/1 /proc/$pid/fd/2"
        break
      fi
    done
    set +f
  done
  set -f
  IFS=' '
  [ -n "$candidates" ] || return
  links=$(ls -l $candidates 2>/dev/null)
  IFS=$nl
  for link in $links; do
    target=\${link#* -> }
    path=\${link% -> *}
    pid=\${path##* /proc/}
    pid=\${pid%%/*}
    for entry in $sessions; do
      case $entry in
        *" $target"|*" \${target% (deleted)}") slay "$pid"; break ;;
      esac
    done
  done
  IFS=' '
}

remove_cgroups() {
  IFS=$nl
  for parent in $cgroups; do
    set +f
    for dir in "$parent"/*/; do
      [ -f "$dir"cgroup.procs ] || continue
      tries=0
      until rmdir "$dir" 2>/dev/null || [ ! -d "$dir" ] || [ "$tries" -ge 100 ]; do
        tries=$((tries + 1))
        sleep 0.01 2>/dev/null
      done
    done
    set -f
    rmdir "$parent" 2>/dev/null
    IFS=$nl
  done
  IFS=' '
}

while IFS=' ' read -r kind rest; do
  case $kind in
    cgroup) cgroups=$cgroups$rest$nl ;;
    uncgroup) forget cgroups "$rest" 0 ;;
    session) sessions=$sessions$rest$nl ;;
    unsession) forget sessions "$rest" 1 ;;
  esac
done

# Terminals whose launcher registered itself before the host could: read now, the host being gone.
if [ -n "$registry" ] && [ -d "$registry" ]; then
  set +f
  for file in "$registry"/[0-9]*; do
    registered=''
    { read -r registered < "$file"; } 2>/dev/null
    case $registered in ''|*[!0-9]*) continue ;; esac
    sessions="$sessions\${file##*/} $registered -$nl"
  done
  set -f
  rm -rf "$registry"
fi

[ -n "$cgroups$sessions" ] || exit 0
read -r uptime rest < /proc/uptime
seconds=\${uptime%.*}
hundredths=\${uptime#*.}
death=$((seconds * hz + \${hundredths#0} * hz / 100 + 1))
passes=0
while :; do
  found=0
  cgroup_pass
  [ "$found" = 1 ] || session_pass
  [ "$found" = 0 ] && break
  passes=$((passes + 1))
  [ "$passes" -ge ${WATCHDOG_MAX_PASSES} ] && break
  sleep 0.01 2>/dev/null
done
remove_cgroups
`
