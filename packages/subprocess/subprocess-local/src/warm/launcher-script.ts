import { CLOSE_INHERITED_PERL } from '../cgroup/launcher'

/** Where a warm launcher's perl is looked for: system directories only, never the agent's PATH. */
export const WARM_PERL_PATH = '/usr/bin:/bin:/usr/local/bin'

/** The argument a warm launcher's perl carries, so that its command line says what it is. */
export const WARM_LAUNCHER_NAME = 'dsh-warm-launcher'

/** What a warm launcher prints once it waits for its program: the only bytes it prints before the frame. */
export const WARM_READY = Buffer.from('\x1b]dsh-warm;ready\x07', 'latin1')

/**
 * What a warm launcher prints after it read the frame and gave the terminal back its settings, right
 * before it starts the program. The carriage return leaves the terminal's column at 0, as a fresh one is.
 */
export const WARM_GO = Buffer.from('\x1b]dsh-warm;go\x07\r', 'latin1')

/**
 * Architectures whose terminal ioctls and flag bits are the kernel's generic ones (`TCGETS` 0x5401,
 * `TCSETS` 0x5402, a 36-byte `struct termios`, `ICANON` 0x2 …), which the launcher's script spells
 * out because core perl without `POSIX` (tens of ms to load) has no names for them.
 */
export const WARM_LAUNCH_ARCHES: readonly string[] = ['x64', 'ia32', 'arm64', 'arm', 'riscv64']

// Runs after the join launcher joined the session's cgroups. It saves the terminal's settings and
// turns off canonical mode, echo, signals and input translation (IXON ICRNL IGNCR INLCR ISTRIP;
// ICANON ECHO ECHONL ISIG IEXTEN), so that the frame arrives as the bytes written, without echo and
// through the kernel's raw path; says it is ready; reads `<length>\n<frame>`; restores the settings
// exactly; says go; then becomes the program: chdir, the environment replaced in order, exec with
// argv[0] = the file, as node-pty's own child does. The terminal closing (host gone, teardown)
// ends it quietly.
const SCRIPT = [
  'my $saved = "\\0" x 64; ioctl(STDIN, 0x5401, $saved) or exit 0;',
  "my $raw = $saved; my ($iflag, $lflag) = unpack 'L x8 L', $raw;",
  "substr($raw, 0, 4) = pack 'L', $iflag & ~0x5e0; substr($raw, 12, 4) = pack 'L', $lflag & ~0x804b;",
  'ioctl(STDIN, 0x5402, $raw) or exit 0;',
  'syswrite STDOUT, "\\e]dsh-warm;ready\\a";',
  "my $in = '';",
  'until ($in =~ /\\A(\\d+)\\n/ && length($in) >= length($1) + 1 + $1) { sysread(STDIN, $in, 65536, length $in) or exit 0 }',
  '$in =~ s/\\A(\\d+)\\n//; my $frame = substr $in, 0, $1;',
  'ioctl(STDIN, 0x5402, $saved) or exit 0;',
  'my ($cwd, $file, $count, @rest) = split /\\0/, $frame, -1;',
  'exit 0 unless defined $count;',
  'my @args = splice @rest, 0, $count;',
  'syswrite STDOUT, "\\e]dsh-warm;go\\a\\r";',
  'chdir $cwd or do { print STDERR "chdir(2) failed.: $!\\n"; exit 1 };',
  '%ENV = ();',
  "for my $pair (@rest) { my $at = index $pair, '='; $ENV{substr $pair, 0, $at} = substr $pair, $at + 1 }",
  // What the launcher inherited from the host (other sessions' PTY masters) goes before the program runs.
  CLOSE_INHERITED_PERL,
  'exec { $file } $file, @args;',
  'print STDERR "execvp(3) failed.: $!\\n"; exit 1;',
].join('\n')

/** The arguments of `perl` for a warm launcher. */
export const WARM_LAUNCHER_ARGS: readonly string[] = ['-e', SCRIPT, WARM_LAUNCHER_NAME]

/**
 * The environment node-pty would give the program: `env` with `PWD` set to `cwd` and `TERM` to the
 * terminal name, in the same order (a name already present keeps its place), as `NAME=value` entries.
 */
export function ptyEnvironment(env: Readonly<Record<string, string>>, cwd: string, name: string): string[] {
  const entries: Record<string, string> = { ...env }
  entries.PWD = cwd
  entries.TERM = name
  return Object.keys(entries).map((key) => `${key}=${entries[key]}`)
}

/**
 * The frame that starts `file` with `args` in `cwd` with exactly `environment`: its length in decimal
 * and a newline, then the fields joined by NUL (none of them can hold one: the kernel takes argv and
 * environ as C strings, and the spec's validation refuses NUL).
 */
export function launchFrame(cwd: string, file: string, args: readonly string[], environment: readonly string[]): Buffer {
  const payload = Buffer.from([cwd, file, String(args.length), ...args, ...environment].join('\0'), 'utf8')
  return Buffer.concat([Buffer.from(`${payload.length}\n`, 'latin1'), payload])
}
