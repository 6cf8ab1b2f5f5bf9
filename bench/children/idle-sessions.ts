// Host memory per idle session, in a process of its own: `raw` (bare node-pty bashes with the marker
// prompt) or `shell`/`confined` (the stack). One session is opened first (code loaded, caches warm),
// then `count` more, one after the other, each to its prompt; RSS after a full GC before and after
// gives the growth per session. Prints the growth of RSS and of the JS heap per session, in bytes.
import { collectGarbage } from '../lib/child'
import { RawShell } from '../lib/raw-shell'
import { mount } from '../lib/shell-stack'

const side = process.argv[2]
const count = Number(process.argv[3] ?? 100)
let open: () => Promise<() => Promise<unknown>>
let dispose = async () => {}
if (side === 'raw') {
  open = async () => {
    const raw = await RawShell.open()
    return () => raw.close()
  }
} else if (side === 'shell' || side === 'confined') {
  const stack = await mount(side === 'confined' ? 'workspace-write' : 'danger-full-access')
  open = async () => {
    const id = await stack.open()
    return () => stack.close(id)
  }
  dispose = () => stack.dispose()
} else throw new Error(`bench: idle-sessions side must be raw, shell or confined, not ${side}`)

/** RSS and heap after a full collection, once a turn of the event loop let pending callbacks run. */
async function settledMemory(): Promise<{ rss: number; heap: number }> {
  await new Promise((resolve) => setImmediate(resolve))
  collectGarbage()
  const { rss, heapUsed } = process.memoryUsage()
  return { rss, heap: heapUsed }
}

const closes = [await open()]
const before = await settledMemory()
for (let index = 0; index < count; index++) closes.push(await open())
const after = await settledMemory()
for (const close of closes) await close()
await dispose()
console.log(JSON.stringify({ rssPerSession: (after.rss - before.rss) / count, heapPerSession: (after.heap - before.heap) / count }))
