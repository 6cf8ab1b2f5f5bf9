// The flight recorder's cost: the 27 MB flood drained by a session the recorder records and by one it
// does not, in one process and one run, taking turns flood by flood. Every flood gets a fresh session
// (opened and closed outside the timing), so each recorded flood is recorded whole, and its file is
// checked against maxBytesPerSession before it is removed.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as recorderPlugin from '../../packages/terminal/terminal-recorder/src/index'
import type { RecorderService } from '../../packages/terminal/terminal-recorder/src/index'
import { collectRotating, timed } from '../lib/measure'
import { exact, mount, type Stack } from '../lib/shell-stack'
import type { BenchRow } from '../lib/types'
import { FLOOD, FLOOD_BYTES } from '../lib/workloads'

const OFF = 'recorder: 27 MB flood, recording off'
const ON = 'recorder: 27 MB flood, recording on'
/** The default bound: a whole flood (about 28 MB of asciicast) fits. */
const MAX_BYTES = 64 * 1024 * 1024
const FLOODS = 7

/** MiB/s of one flood drained in `ms`. */
const rate = (ms: number) => FLOOD_BYTES / 1_048_576 / (ms / 1000)

/** Recording on against recording off, in turns; fails the run if a recording exceeds its bound. */
export async function recorder(): Promise<BenchRow[]> {
  const plain = await mount()
  const recorded = await mount()
  const directory = mkdtempSync(join(tmpdir(), 'dsh-bench-recordings-'))
  const fileSizes: number[] = []
  try {
    await recorded.root.plugin(recorderPlugin, { dir: directory, maxBytesPerSession: MAX_BYTES, retentionDays: 0 })
    const service = recorded.root.get('recorder') as RecorderService
    const flood = (stack: Stack, check?: () => Promise<void>) => async () => {
      const id = await stack.open()
      const ms = await timed(async () => exact(await stack.run(id, FLOOD), 'dsh> ', 'the flood'))
      await stack.close(id)
      await check?.()
      return rate(ms)
    }
    const checkFile = async () => {
      await service.settled()
      for (const name of await service.list()) {
        const path = join(directory, name)
        const size = statSync(path).size
        if (size > MAX_BYTES) throw new Error(`bench: the recording ${name} holds ${size} bytes, over maxBytesPerSession ${MAX_BYTES}`)
        // A recording that stopped early (the writer fell behind) would make this side cheaper than it is.
        if (readFileSync(path, 'utf8').includes('"recording stopped: ')) throw new Error(`bench: the recording ${name} stopped before its flood ended`)
        fileSizes.push(size)
        rmSync(path)
      }
    }
    const [off, on] = await collectRotating(FLOODS, [flood(plain), flood(recorded, checkFile)], 1)
    const largest = Math.max(...fileSizes) / 1_048_576
    return [
      { figure: OFF, unit: 'MiB/s', higherIsBetter: true, samples: off! },
      {
        figure: ON,
        unit: 'MiB/s',
        higherIsBetter: true,
        floor: OFF,
        note: `two stacks in this process take turns, a fresh session per flood; each recording up to ${largest.toFixed(1)} MiB, all within maxBytesPerSession (${MAX_BYTES / 1_048_576} MiB)`,
        samples: on!,
      },
    ]
  } finally {
    await recorded.dispose()
    await plain.dispose()
    rmSync(directory, { recursive: true, force: true })
  }
}
