/*
 * Raw requests for the egress attack tests: built here as bytes (hex, so NUL and control bytes
 * pass through bash), sent from inside a sandbox by RAW_CLIENT through the forwarder on
 * 127.0.0.1:3128, which prints the whole answer back as one line with every byte outside
 * printable ASCII escaped as \xNN.
 */

/** One request to send raw: a label for failure messages, and its bytes in hex. */
export interface ProbeRequest {
  readonly label: string
  readonly hex: string
}

/** The in-sandbox client (perl, which the allowlist network needs anyway): send, read to the end (at most 5 s), print escaped. */
export const RAW_CLIENT = `use strict; use warnings; use IO::Socket::INET;
my $socket = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => 3128, Proto => 'tcp') or do { print "<no forwarder: $!>\\n"; exit 0 };
syswrite $socket, pack('H*', $ARGV[0]);
my $answer = '';
my $whole = eval {
  local $SIG{ALRM} = sub { die "timeout\\n" };
  alarm 5;
  while (sysread($socket, my $chunk, 4096)) { $answer .= $chunk; last if length($answer) > 8192 }
  alarm 0;
  1;
};
$answer .= '<timeout>' unless $whole;
$answer =~ s/([^\\x20-\\x7e])/sprintf('\\\\x%02x', ord $1)/ge;
print "$answer\\n";
`

/** An HTTP request (or anything the proxy reads as one), sent as written. */
export function httpProbe(request: string): ProbeRequest {
  return { label: JSON.stringify(request), hex: Buffer.from(request, 'latin1').toString('hex') }
}

/** Where a SOCKS5 request points: a name (address type 3), an IPv4 (1) or a full IPv6 address (4). */
export type SocksTarget = { readonly name: string } | { readonly ipv4: readonly number[] } | { readonly ipv6: string }

/** A SOCKS5 greeting (no authentication) and one request (`command` 1 CONNECT, 2 BIND, 3 UDP ASSOCIATE), then `after`. */
export function socksProbe(target: SocksTarget, port: number, after = '', command = 1): ProbeRequest {
  let address: Buffer
  if ('name' in target) {
    const name = Buffer.from(target.name, 'latin1')
    address = Buffer.concat([Buffer.from([3, name.length]), name])
  } else if ('ipv4' in target) {
    address = Buffer.from([1, ...target.ipv4])
  } else {
    address = Buffer.concat([Buffer.from([4]), Buffer.from(target.ipv6.replace(/:/g, ''), 'hex')])
  }
  const portBytes = Buffer.alloc(2)
  portBytes.writeUInt16BE(port)
  const frames = Buffer.concat([Buffer.from([5, 1, 0, 5, command, 0]), address, portBytes, Buffer.from(after, 'latin1')])
  return { label: `socks5 ${command} ${JSON.stringify(target)}:${port}`, hex: frames.toString('hex') }
}
