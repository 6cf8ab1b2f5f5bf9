import { randomBytes } from 'node:crypto'
import { TerminalStream } from './packages/terminal/terminal-bash/src/session/terminal-stream'
const data = Buffer.from(randomBytes(20_000_000).toString('base64').replace(/.{76}/g, '$&\r\n'), 'latin1')
const chunks: Buffer[] = []
for (let i = 0; i < data.length; i += 2048) chunks.push(Buffer.from(data.subarray(i, i + 2048)))
function run(): number {
  const stream = new TerminalStream({ nonce: 1, scrollbackLines: 10000, scrollbackMaxBytes: 8 * 1024 * 1024, prompt: 'dsh> ', continuationPrompt: '> ', size: { rows: 40, cols: 160 } } as never)
  const t = process.cpuUsage()
  for (const c of chunks) stream.write(c)
  const u = process.cpuUsage(t)
  return (u.user + u.system) / 1000
}
const ab = (globalThis as any).AB_FLAG
const all: number[] = []; for (let r = 0; r < 12; r++) all.push(run()); all.sort((a, b) => a - b); console.log(process.env.DSH_AB, "min", all[0]!.toFixed(0), "median", all[6]!.toFixed(0))
