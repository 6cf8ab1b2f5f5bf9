import { Context } from '@deepseek-ai/cordis'
import { mkdtemp, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as agentPlugin from 'dsh-agent'
import * as policyPlugin from 'dsh-sandbox-policy'

/** A fresh canonical directory, removed by the returned cleanup. */
export async function scratchDir(prefix: string): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await realpath(await mkdtemp(join(tmpdir(), `dsh-policy-${prefix}-`)))
  return { path, remove: () => rm(path, { recursive: true, force: true }) }
}

/** A root context with `ctx.agents` and `ctx.sandboxPolicy` mounted under `config`. */
export async function setup(config: Parameters<typeof policyPlugin.apply>[1] = {}) {
  const root = new Context()
  await root.plugin(agentPlugin)
  const policy = await root.plugin(policyPlugin, config)
  return { root, policy }
}

/** The code of a thrown error, or a description of what happened instead. */
export function codeOf(run: () => unknown): string | undefined {
  try {
    run()
  } catch (error) {
    return (error as { code?: string }).code ?? `no code: ${String(error)}`
  }
  return undefined
}
