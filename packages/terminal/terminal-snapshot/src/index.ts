import type { Context } from '@deepseek-ai/cordis'
import type {} from 'dsh-terminal'
import { z } from 'zod'
import { snapshotBackend } from './backend'

/** Plugin name used in a cordis.yml (the snapshot overlay, `examples/snapshot.yml`). */
export const name = 'dsh-terminal-snapshot'

/** Registers a backend on the terminal registry. */
export const inject = ['terminals']

/** No options: the snapshot terminal is the same everywhere. */
export const Config = z.object({}).prefault({})

/** Register the deterministic `snapshot` backend; it goes away when this plugin unloads. */
export function apply(ctx: Context, _config: z.input<typeof Config>): void {
  ctx.terminals.registerBackend(snapshotBackend)
}
