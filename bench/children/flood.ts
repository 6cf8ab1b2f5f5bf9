// One side of the flood rows in a process of its own: `raw`, `shell` or `confined`. Floods `count`
// times (the first unmeasured: it grows V8's heap once) and prints, per measured flood, the wall
// time, this process's CPU time and its peak RSS (VmHWM, reset before each flood).
import { collectGarbage, peakRss, resetPeakRss } from '../lib/child'
import { cpuMicros, timed } from '../lib/measure'
import { RawShell } from '../lib/raw-shell'
import { exact, mount } from '../lib/shell-stack'
import { FLOOD } from '../lib/workloads'

const side = process.argv[2]
const count = Number(process.argv[3] ?? 4)
let drain: () => Promise<unknown>
let close: () => Promise<void>
if (side === 'raw') {
  const raw = await RawShell.open()
  drain = () => raw.run(FLOOD)
  close = () => raw.close()
} else if (side === 'shell' || side === 'confined') {
  const stack = await mount(side === 'confined' ? 'workspace-write' : 'danger-full-access')
  const id = await stack.open()
  drain = async () => exact(await stack.run(id, FLOOD), 'dsh> ', 'the flood')
  close = async () => {
    await stack.close(id)
    await stack.dispose()
  }
} else throw new Error(`bench: flood side must be raw, shell or confined, not ${side}`)

const floods: { ms: number; cpuMs: number; peakMiB: number; baseMiB: number }[] = []
for (let round = 0; round < count; round++) {
  collectGarbage()
  const baseMiB = process.memoryUsage().rss / 1_048_576
  resetPeakRss()
  let ms = 0
  const cpu = await cpuMicros(async () => {
    ms = await timed(drain)
  })
  if (round > 0) floods.push({ ms, cpuMs: cpu / 1000, peakMiB: peakRss() / 1_048_576, baseMiB })
}
await close()
console.log(JSON.stringify({ floods }))
