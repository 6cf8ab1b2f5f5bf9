/**
 * Manual throughput sanity check for the output path (sanitizer → prompt tracker → scrollback ring
 * → send buffer), the work done per PTY chunk. Not a unit test: timings vary by machine.
 *
 *   npx tsx packages/terminal/terminal-bash/test/throughput.manual.ts
 */
import { Buffer } from 'node:buffer'
import { randomBytes } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { PromptTracker, ScrollbackRing, SendOutputBuffer, TerminalSanitizer } from '../src/output'

const MiB = 1024 * 1024

/** What `head -c 20000000 /dev/urandom | base64` looks like after the PTY's ONLCR. */
function base64Flood(): Buffer {
  const encoded = randomBytes(20_000_000).toString('base64')
  const lines: string[] = []
  for (let index = 0; index < encoded.length; index += 76) lines.push(encoded.slice(index, index + 76))
  return Buffer.from(lines.join('\r\n') + '\r\n\x1b]133;D;0\x07dsh> ', 'latin1')
}

function repeatTo(unit: string, bytes: number): Buffer {
  const one = Buffer.from(unit, 'utf8')
  return Buffer.concat(Array.from({ length: Math.ceil(bytes / one.length) }, () => one))
}

function run(name: string, input: Buffer, chunkSize: number): void {
  const sanitizer = new TerminalSanitizer({ maxLineLength: 4 * MiB })
  const tracker = new PromptTracker('dsh> ')
  const ring = new ScrollbackRing({ maxLines: 10_000, maxBytes: 4 * MiB })
  const send = new SendOutputBuffer(sanitizer.line, 256 * 1024)
  const heapBefore = process.memoryUsage().heapUsed
  const rssBefore = process.memoryUsage.rss()
  let rssPeak = rssBefore
  let chunks = 0
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  for (let offset = 0; offset < input.length; offset += chunkSize) {
    const chunk = sanitizer.write(input.subarray(offset, offset + chunkSize))
    tracker.update(chunk)
    ring.append(chunk)
    send.append(chunk)
    if (++chunks % 64 === 0) rssPeak = Math.max(rssPeak, process.memoryUsage.rss())
  }
  const result = send.settle()
  const seconds = (performance.now() - started) / 1000
  const cpu = process.cpuUsage(cpuBefore)
  const heapAfter = process.memoryUsage().heapUsed
  const rate = input.length / MiB / seconds
  const cpuRate = input.length / MiB / ((cpu.user + cpu.system) / 1e6)
  console.log(
    `${name.padEnd(38)} chunk ${String(chunkSize).padStart(6)}  ${(input.length / MiB).toFixed(1)} MiB in ${seconds.toFixed(3)} s` +
      ` = ${rate.toFixed(1).padStart(6)} MiB/s wall, ${cpuRate.toFixed(1).padStart(6)} MiB/s cpu` +
      `  ready=${tracker.ready} ring=${ring.retainedLines} lines/${(ring.retainedBytes / MiB).toFixed(2)} MiB` +
      ` viewport=${(Buffer.byteLength(result.viewport) / 1024).toFixed(0)} KiB heapΔ=${((heapAfter - heapBefore) / MiB).toFixed(1)} MiB` +
      ` peak rssΔ=${((rssPeak - rssBefore) / MiB).toFixed(1)} MiB`,
  )
}

const flood = base64Flood()
// The first pass includes JIT warm-up, as the first flood of a session would.
for (const size of [65536, 65536, 4096]) run('base64 flood (27 MB)', flood, size)
run('SGR-colored words', repeatTo('\x1b[1;32mok\x1b[0m word \x1b[31mred\x1b[0m\r\n', 27 * MiB), 65536)
run('progress bar frames (CR)', repeatTo('\r[#####     ] 50% 1.2 MB/s', 27 * MiB), 65536)
run('UTF-8 text (é€😀 漢字)', repeatTo('héllo wörld € 😀 漢字テキスト\r\n', 27 * MiB), 65536)
run('one line, no newline', repeatTo('x', 27 * MiB), 65536)
run('CR rewrite of a 1 MiB line per chunk', Buffer.concat([repeatTo('y', MiB), repeatTo('\rz', 8 * MiB)]), 65536)
run('random bytes', randomBytes(27 * MiB), 65536)
console.log(`rss ${(process.memoryUsage().rss / MiB).toFixed(0)} MiB`)
