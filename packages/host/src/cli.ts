#!/usr/bin/env node
import { pathToFileURL } from 'node:url'
import { realpathSync } from 'node:fs'
import { runAttach } from './attach/command'
import { runAuditVerify } from './cli/audit-verify'
import { runDoctor } from './cli/doctor'
import { runReplay } from './cli/replay'
import { parseCliArgs, USAGE } from './cli/args'
import { presetPath, resolveConfigPath } from './compose/config-path'
import { runHeadlessStdio } from './headless/stdio'
import { runMcpHttp } from './mcp/http-command'
import { runMcpStdio } from './mcp/stdio'
import { HOST_VERSION } from './version'
import { errorMessage } from 'dsh-basics'

/**
 * The `dsh-terminal-mcp` command (also installed as `dsh-terminal`): parse the command line, resolve
 * the composition (before changing to `--cwd`, so a relative `--config` means what the user typed),
 * and run the chosen host.
 * Resolves with the process exit code; writes nothing to stdout except the protocol or --help/--version.
 */
export async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] === 'replay') return runReplay(argv.slice(1))
  const request = parseCliArgs(argv)
  if (request.kind === 'help') {
    process.stdout.write(USAGE)
    return 0
  }
  if (request.kind === 'version') {
    process.stdout.write(`${HOST_VERSION}\n`)
    return 0
  }
  if (request.kind === 'usage-error') {
    // One line: what was wrong, and where the usage is (30 lines of it would bury the mistake).
    process.stderr.write(`dsh-terminal: ${request.message} (dsh-terminal-mcp --help shows the usage)\n`)
    return 2
  }
  if (request.kind === 'attach') return runAttach(request)
  if (request.kind === 'audit-verify') return runAuditVerify(request.file)
  let configPath: string
  try {
    configPath = request.preset ? presetPath(request.preset) : resolveConfigPath(request.config)
    if (request.cwd) process.chdir(request.cwd)
  } catch (error) {
    process.stderr.write(`dsh-terminal ${request.kind === 'doctor' ? 'doctor' : request.command}: ${errorMessage(error)}\n`)
    return 1
  }
  if (request.kind === 'doctor') return runDoctor({ configPath, json: request.json })
  const web = request.web !== undefined ? { web: request.web } : {}
  if (request.http) {
    const metricsWithoutToken = request.metricsWithoutToken === true
    return runMcpHttp({
      configPath,
      address: request.http,
      idleTimeoutMs: request.idleTimeoutMs,
      quietIdleTimeoutMs: request.quietIdleTimeoutMs,
      metricsWithoutToken,
      ...web,
    })
  }
  const metrics = request.metrics !== undefined ? { metrics: request.metrics } : {}
  return request.command === 'mcp' ? runMcpStdio({ configPath, ...web, ...metrics }) : runHeadlessStdio({ configPath })
}

/** True when this module is the program being run (not imported by a test or another host). */
function isEntryPoint(): boolean {
  const script = process.argv[1]
  if (!script) return false
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href
  } catch {
    return false
  }
}

if (isEntryPoint()) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`dsh-terminal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
      process.exit(1)
    },
  )
}
