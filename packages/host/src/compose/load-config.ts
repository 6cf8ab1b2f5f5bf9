import { existsSync, statSync } from 'node:fs'
import { basename, dirname, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Context, type Fiber } from '@deepseek-ai/cordis'
import Loader from '@deepseek-ai/cordis-plugin-loader'
import type { AgentService } from 'dsh-agent'
import type { ToolService } from 'dsh-tools'
import { startupFailures } from './assert-started'
import { FAMILY_BUILTINS, type PluginImporter } from './builtins'
import { readOnlyInclude } from './include'
import { exportLog, type LogSink, stderrSink } from './log'
import { errorMessage } from 'dsh-basics'

/** How to mount a cordis.yml. */
export interface LoadOptions {
  /** The cordis.yml (top-level entry list); relative paths resolve against the process cwd. */
  configPath: string
  /** Package names resolved without module resolution; defaults to the whole family. */
  builtins?: Readonly<Record<string, PluginImporter>>
  /** Where log lines go; defaults to standard error. */
  log?: LogSink
}

/** A started composition: the root context and the two services every host needs. */
export interface Composition {
  /** The root Cordis context the loader mounted the file into. */
  readonly root: Context
  /** Absolute path of the loaded file. */
  readonly configPath: string
  /** `ctx.tools` of the composition: the tool list and the call pipeline. */
  readonly tools: ToolService
  /** `ctx.agents`: one agent per client connection. */
  readonly agents: AgentService
  /** Unload everything (agents end, sessions and jobs close); idempotent. */
  dispose(): Promise<void>
}

/**
 * Raised when a composition does not start. The message lists every failed entry and what the
 * loader logged, so the user sees the real cause instead of a host that runs without its tools.
 */
export class CompositionError extends Error {
  /** Stable code for callers that route on errors. */
  readonly code = 'COMPOSITION_FAILED'

  constructor(
    /** The file that failed to start. */
    readonly configPath: string,
    /** One line per failed entry or rejected patch. */
    readonly failures: readonly string[],
    logged: readonly string[] = [],
  ) {
    const log = logged.length ? `\nlogged while loading:\n${logged.map((line) => `  ${line}`).join('\n')}` : ''
    super(`${configPath} did not start:\n${failures.map((line) => `  ${line}`).join('\n')}${log}`)
    this.name = 'CompositionError'
  }
}

/**
 * Mount a cordis.yml through the Cordis loader and fail loudly: any entry whose plugin fails to
 * import, validate or start, any patch that matches nothing, and a composition without `ctx.tools`
 * or `ctx.agents` reject with a {@link CompositionError} after everything started is unloaded.
 * The file is never written.
 */
export async function loadComposition(options: LoadOptions): Promise<Composition> {
  const configPath = resolve(options.configPath)
  if (!existsSync(configPath) || !statSync(configPath).isFile()) {
    throw new CompositionError(configPath, [`no such config file: ${configPath}`])
  }
  const root = new Context()
  const capture = exportLog(root, options.log ?? stderrSink)
  root.baseUrl = `${pathToFileURL(dirname(configPath)).href}/`
  let loaderFiber: Fiber | undefined
  let disposing: Promise<void> | undefined
  const dispose = () => (disposing ??= Promise.resolve(loaderFiber?.dispose()).then(() => undefined))

  try {
    loaderFiber = await root.plugin(Loader)
    root.loader.builtins.include = readOnlyInclude(options.builtins ?? FAMILY_BUILTINS)
    await root.loader.create({ name: 'cordis:include', config: { path: `./${basename(configPath)}` } })
    const failures = await startupFailures(root.loader)
    for (const warning of capture.patchWarnings) failures.push(`rejected overlay: ${warning}`)
    const tools = root.get('tools') as ToolService | undefined
    const agents = root.get('agents') as AgentService | undefined
    if (!failures.length && !tools) failures.push('no entry provides ctx.tools: mount dsh-tools')
    if (!failures.length && !agents) failures.push('no entry provides ctx.agents: mount dsh-agent')
    if (failures.length || !tools || !agents) throw new CompositionError(configPath, failures, capture.problems)
    return { root, configPath, tools, agents, dispose }
  } catch (error) {
    await dispose().catch(() => {})
    if (error instanceof CompositionError) throw error
    throw new CompositionError(configPath, [errorMessage(error)], capture.problems)
  }
}
