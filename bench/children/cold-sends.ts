// The first `true` sends of a fresh process, before V8 has optimized the send path: `raw` (a bare
// node-pty bash with the marker prompt) or `shell` (the stack through ctx.terminals). One session is
// opened (its code loaded), then `count` sends are made one after the other. Prints this process's CPU
// time per send and the median round trip over them, in µs.
import { percentile } from '../lib/stats'
import { RawShell } from '../lib/raw-shell'
import { exact, mount } from '../lib/shell-stack'

const side = process.argv[2]
const count = Number(process.argv[3] ?? 200)
let send: () => Promise<unknown>
let close: () => Promise<unknown>
if (side === 'raw') {
  const raw = await RawShell.open()
  send = () => raw.run('true')
  close = () => raw.close()
} else if (side === 'shell') {
  const stack = await mount()
  const id = await stack.open()
  send = async () => exact(await stack.run(id, 'true'), 'dsh> ', '`true`', 'prompt')
  close = async () => {
    await stack.close(id)
    await stack.dispose()
  }
} else throw new Error(`bench: cold-sends side must be raw or shell, not ${side}`)

const walls: number[] = []
const start = process.cpuUsage()
for (let index = 0; index < count; index++) {
  const began = performance.now()
  await send()
  walls.push((performance.now() - began) * 1000)
}
const used = process.cpuUsage(start)
await close()
console.log(JSON.stringify({ cpuPerSend: (used.user + used.system) / count, roundTrip: percentile(walls, 50) }))
