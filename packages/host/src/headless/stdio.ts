import { reserveStdout, waitForShutdown } from '../cli/lifecycle'
import { loadComposition } from '../compose/load-config'
import { startHumanAccess } from '../human/host-access'
import { runJsonLines } from './runner'
import { errorMessage } from 'dsh-basics'

/** Options of {@link runHeadlessStdio}. */
export interface HeadlessStdioOptions {
  /** The cordis.yml to run. */
  configPath: string
}

/**
 * `dsh-terminal headless`: JSON lines on stdin, one response line each on stdout, as one agent.
 * At EOF every queued line is answered, then the agent's sessions and jobs close and the exit code
 * is 0. SIGINT/SIGTERM cancel the call in flight and close everything the same way.
 */
export async function runHeadlessStdio(options: HeadlessStdioOptions): Promise<number> {
  reserveStdout()
  const composition = await loadComposition({ configPath: options.configPath }).catch((error: unknown) => {
    process.stderr.write(`dsh-terminal headless: ${errorMessage(error)}\n`)
    return undefined
  })
  if (!composition) return 1
  const stop = new AbortController()
  void waitForShutdown(process.stdout).then(() => stop.abort())
  const human = await startHumanAccess(composition, 'headless')
  let code = 0
  try {
    const agent = await composition.agents.create()
    try {
      await runJsonLines({ input: process.stdin, output: process.stdout, tools: composition.tools, agent, signal: stop.signal })
    } finally {
      await agent.dispose().catch((error: unknown) => {
        code = 1
        process.stderr.write(`dsh-terminal headless: closing sessions failed: ${errorMessage(error)}\n`)
      })
    }
  } finally {
    await human.close()
    await composition.dispose().catch((error: unknown) => {
      code = 1
      process.stderr.write(`dsh-terminal headless: unloading failed: ${errorMessage(error)}\n`)
    })
  }
  return code
}
