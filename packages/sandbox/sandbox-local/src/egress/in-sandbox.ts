import { accessSync, constants } from 'node:fs'
import { SandboxError } from 'dsh-sandbox'

/*
 * The sandbox's end of the egress proxy. An `allowlist` sandbox has no network, only its own
 * loopback; the host's proxy listens on a Unix socket bound in at EGRESS_DIRECTORY. Programs speak
 * TCP to proxies, so a small forwarder (perl, which the launcher needs anyway) listens on
 * 127.0.0.1:EGRESS_PORT inside and relays each connection to that socket. It starts before the
 * command, as a daemon of its own session (not a child of the shell, no terminal), in the
 * sandbox's cgroup and pid namespace: it ends with the sandbox.
 */

/** Where the proxy's directory (its socket and the connect helper) appears inside a sandbox. */
export const EGRESS_DIRECTORY = '/tmp/.dsh-egress'

/** The proxy's socket inside a sandbox. */
export const EGRESS_SOCKET = `${EGRESS_DIRECTORY}/proxy.sock`

/** The connect helper inside a sandbox: `connect HOST PORT` relays stdin and stdout, an ssh ProxyCommand. */
export const EGRESS_CONNECT_HELPER = `${EGRESS_DIRECTORY}/connect`

/** The loopback port the forwarder listens on inside every `allowlist` sandbox (squid's, by habit). */
export const EGRESS_PORT = 3128

/** Where perl is looked for: system paths only, never the session's PATH. */
const SYSTEM_PERLS = ['/usr/bin/perl', '/bin/perl', '/usr/local/bin/perl']

/** The host's perl, which the sandbox sees at the same path; `SANDBOX_UNAVAILABLE` without one. */
export function systemPerl(): string {
  for (const path of SYSTEM_PERLS) {
    try {
      accessSync(path, constants.X_OK)
      return path
    } catch {}
  }
  throw new SandboxError(
    'SANDBOX_UNAVAILABLE',
    `the allowlist network needs perl (${SYSTEM_PERLS.join(', ')}) for its in-sandbox forwarder; install perl, or choose network none or host`,
  )
}

/**
 * The forwarder, as `perl -e FORWARDER socket port -- program args…`: listens, holds the proxy (a
 * connection whose first byte is 0: the proxy lives while the daemon keeps it open, so it ends with
 * the sandbox), starts the relay daemon (double fork, setsid, stdio on /dev/null), then becomes the
 * program. Listening comes first, so the proxy is there before the program's first command; a
 * forwarder that cannot listen or hold fails the start rather than leave a program without its network.
 */
const FORWARDER = `
use strict; use warnings; use Socket; use IO::Socket::INET; use IO::Socket::UNIX; use IO::Select; use POSIX ();
my ($path, $port) = splice(@ARGV, 0, 3);
my $listener = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => $port, Proto => 'tcp', Listen => 128, ReuseAddr => 1)
  or die "dsh-sandbox: the egress forwarder cannot listen on 127.0.0.1:$port: $!\\n";
my $hold = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path)
  or die "dsh-sandbox: the egress forwarder cannot reach the egress proxy ($path): $!\\n";
syswrite($hold, "\\0") == 1 or die "dsh-sandbox: the egress forwarder cannot hold the egress proxy: $!\\n";
defined(my $middle = fork) or die "dsh-sandbox: cannot start the egress forwarder: $!\\n";
if ($middle == 0) {
  POSIX::setsid();
  defined(my $daemon = fork) or POSIX::_exit(1);
  POSIX::_exit(0) if $daemon;
  open(STDIN, '<', '/dev/null'); open(STDOUT, '>', '/dev/null'); open(STDERR, '>', '/dev/null');
  $0 = 'dsh-egress-forwarder';
  $SIG{CHLD} = 'IGNORE';
  for (;;) {
    my $client = $listener->accept or do { select(undef, undef, undef, 0.1); next };
    my $child = fork;
    if (defined $child && $child == 0) { close $listener; close $hold; relay($client); POSIX::_exit(0) }
    close $client;
  }
}
waitpid $middle, 0;
close $listener;
close $hold;
exec { $ARGV[0] } @ARGV or die "dsh-sandbox: cannot run $ARGV[0]: $!\\n";
sub relay {
  my ($client) = @_;
  my $upstream = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path) or return;
  my %peer = (fileno($client) => $upstream, fileno($upstream) => $client);
  my $select = IO::Select->new($client, $upstream);
  while ($select->count > 0) {
    for my $from ($select->can_read) {
      my $to = $peer{fileno $from};
      my $read = sysread $from, my $buffer, 65536;
      if (!$read) { $select->remove($from); shutdown $to, 1; next }
      for (my $offset = 0; $offset < $read; ) {
        my $written = syswrite $to, $buffer, $read - $offset, $offset;
        return unless defined $written;
        $offset += $written;
      }
    }
  }
}
`

/** The sandbox's command: the forwarder, then `argv` (the same pid: the forwarder execs it). */
export function withForwarder(perl: string, argv: readonly string[]): string[] {
  return [perl, '-e', FORWARDER, EGRESS_SOCKET, String(EGRESS_PORT), '--', ...argv]
}

/**
 * The connect helper's file (`#!perl`): a SOCKS5 client of the proxy's socket that relays stdin
 * and stdout, for ssh's ProxyCommand. A refusal prints which host and how to allow it.
 */
export function connectHelperScript(perl: string): string {
  return `#!${perl}
# dsh-terminal sandbox: relay stdin and stdout to HOST:PORT through the egress proxy.
# Use as an ssh ProxyCommand: ssh -o ProxyCommand='${EGRESS_CONNECT_HELPER} %h %p' user@host
use strict; use warnings; use Socket; use IO::Socket::UNIX; use IO::Select;
sub fail { print STDERR "dsh-terminal sandbox: $_[0]\\n"; exit 1 }
my ($host, $port) = @ARGV;
fail("usage: $0 HOST PORT") unless defined $port && $port =~ /^\\d+$/ && $port > 0 && $port < 65536 && length($host) < 256;
my $proxy = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => '${EGRESS_SOCKET}')
  or fail("cannot reach the egress proxy (${EGRESS_SOCKET}): $!");
sub take { my ($count) = @_; my $data = ''; while (length($data) < $count) { my $got = sysread($proxy, my $chunk, $count - length($data)); fail('the egress proxy closed the connection') unless $got; $data .= $chunk } return $data }
syswrite $proxy, pack('C3', 5, 1, 0);
fail('the egress proxy did not accept the handshake') unless take(2) eq pack('C2', 5, 0);
syswrite $proxy, pack('C5', 5, 1, 0, 3, length $host) . $host . pack('n', $port);
my (undef, $code) = unpack('C2', take(4) . take(6));
fail("$host:$port is not on this sandbox's egress allowlist (or resolves to the host's own addresses); to allow it, the user adds \\"$host\\" to allowedHosts in the sandbox policy and opens a new session") if $code == 2;
fail("the egress proxy could not connect to $host:$port (SOCKS reply $code)") if $code != 0;
my $select = IO::Select->new(\\*STDIN, $proxy);
while ($select->count > 0) {
  for my $from ($select->can_read) {
    my $read = sysread $from, my $buffer, 65536;
    if (!$read) {
      $select->remove($from);
      if ($from == $proxy) { exit 0 } else { shutdown $proxy, 1; next }
    }
    my $to = $from == $proxy ? \\*STDOUT : $proxy;
    for (my $offset = 0; $offset < $read; ) { my $written = syswrite $to, $buffer, $read - $offset, $offset; exit 1 unless defined $written; $offset += $written }
  }
}
`
}

/**
 * The variables that point a confined session's programs at the forwarder: HTTP(S) proxies, a
 * SOCKS5 proxy for everything that takes `ALL_PROXY`, git over ssh through the connect helper, and
 * the sandbox's own loopback (its own servers) left direct.
 */
export function egressEnvironment(): Record<string, string> {
  const http = `http://127.0.0.1:${EGRESS_PORT}`
  const socks = `socks5h://127.0.0.1:${EGRESS_PORT}`
  const direct = 'localhost,127.0.0.1,::1'
  return {
    HTTP_PROXY: http,
    HTTPS_PROXY: http,
    http_proxy: http,
    https_proxy: http,
    ALL_PROXY: socks,
    all_proxy: socks,
    NO_PROXY: direct,
    no_proxy: direct,
    GIT_SSH_COMMAND: `ssh -o ProxyCommand='${EGRESS_CONNECT_HELPER} %h %p'`,
    DSH_EGRESS_CONNECT: EGRESS_CONNECT_HELPER,
  }
}
