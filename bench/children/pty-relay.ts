// The least a terminal in another process can cost: bash in node-pty with the floor's marker prompt
// (as RawShell), its output copied to stdout and stdin copied to it, with no framing, offsets or
// bookkeeping. Any session host pays at least this hop; the rows that use it say how much more ours does.
import { RawShell } from '../lib/raw-shell'

const shell = new RawShell()
shell.term.onData((data) => process.stdout.write(data))
process.stdin.on('data', (bytes: Buffer) => shell.term.write(bytes))
void shell.exited.then(() => process.exit(0))
// The caller hung up: hang up on bash too (the exit above follows).
process.stdin.on('end', () => void shell.close())
