import type { TerminalModes } from 'dsh-subprocess'
import { LineHelper, REPLY_TIMEOUT_MS } from './line-helper'

/** The first line the perl helper prints once `POSIX` is loaded: a program that prints anything else is not it. */
export const TERMIOS_GREETING = 'dsh-termios 1'

/**
 * Per device path on stdin, one line out: `e` or `-` for ECHO, then `c` or `-` for ICANON; an empty
 * line when the device could not be opened or is no terminal. The constants come from perl's own
 * POSIX build, so no bit layout is assumed. `O_NOCTTY` matters: the helper leads a session of its
 * own without a terminal, and opening one without it would make the PTY its controlling terminal.
 * `O_NONBLOCK` keeps the open from waiting on a line. The descriptor is closed again at once.
 */
const SCRIPT = `use strict;
use POSIX ();
$| = 1;
my $termios = POSIX::Termios->new;
my ($echo, $icanon) = (POSIX::ECHO(), POSIX::ICANON());
my $mode = POSIX::O_RDONLY() | POSIX::O_NOCTTY() | POSIX::O_NONBLOCK();
print "${TERMIOS_GREETING}\\n";
while (defined(my $device = <STDIN>)) {
  chomp $device;
  my $reply = '';
  my $fd = POSIX::open($device, $mode);
  if (defined $fd) {
    if (defined $termios->getattr($fd)) {
      my $lflag = $termios->getlflag;
      $reply = ($lflag & $echo ? 'e' : '-') . ($lflag & $icanon ? 'c' : '-');
    }
    POSIX::close($fd);
  }
  print "$reply\\n";
}
`

/** Which perl runs the helper, and how long a reply may take (tests point it at fakes). */
export interface PerlTermiosHelperOptions {
  /** The perl to run: an absolute path, or a name looked up on `path` (default `perl`). */
  readonly perl?: string | undefined
  /** PATH the helper runs with (default: the host's). */
  readonly path?: string | undefined
  /** Longest wait for one reply (default 2000 ms). */
  readonly replyTimeoutMs?: number | undefined
}

/** What the perl helper said about a device: the flags, `'unreadable'` (it answered: no terminal there), or `undefined` (no answer). */
export type TermiosReply = TerminalModes | 'unreadable' | undefined

/**
 * One long-lived perl that calls `tcgetattr` itself (core `POSIX::Termios`), so a read forks
 * nothing: one pipe round trip, an `open`, a `tcgetattr` and a `close`. Process management as in
 * {@link LineHelper}; a perl that cannot load `POSIX` exits before its greeting and is not started again.
 */
export class PerlTermiosHelper {
  readonly #helper: LineHelper

  /** Nothing starts until the first {@link read}. */
  constructor(options: PerlTermiosHelperOptions = {}) {
    this.#helper = new LineHelper({
      file: options.perl ?? 'perl',
      args: ['-e', SCRIPT],
      env: { PATH: options.path ?? process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' },
      replyTimeoutMs: options.replyTimeoutMs ?? REPLY_TIMEOUT_MS,
      greeting: TERMIOS_GREETING,
    })
  }

  /** Pid of the running helper, if one runs (diagnostics and tests). */
  get pid(): number | undefined {
    return this.#helper.pid
  }

  /** False once perl could not be started or did not greet (none here, or no `POSIX`), and after {@link dispose}. */
  get available(): boolean {
    return this.#helper.available
  }

  /** The flags of the terminal at `device`. Never rejects. */
  async read(device: string): Promise<TermiosReply> {
    return parseTermiosReply(await this.#helper.request(device))
  }

  /** Stop the helper; pending and later reads resolve `undefined`. */
  dispose(): Promise<void> {
    return this.#helper.dispose()
  }
}

/** Decode one reply line of the perl helper; a line outside the protocol is no answer. */
export function parseTermiosReply(line: string | undefined): TermiosReply {
  if (line === undefined) return undefined
  if (line === '') return 'unreadable'
  if (!/^[e-][c-]$/.test(line)) return undefined
  return { echo: line[0] === 'e', canonical: line[1] === 'c' }
}
