import { parseArgs } from 'node:util'

/** The two ways to serve a composition. */
export type Command = 'mcp' | 'headless'

/** What the command line asked for. */
export type CliRequest =
  | { kind: 'run'; command: Command; config?: string; cwd?: string }
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'usage-error'; message: string }

/** The usage text (printed on stdout for --help, on stderr after a usage error). */
export const USAGE = `Usage:
  dsh-terminal mcp      [--config <cordis.yml>] [--cwd <dir>]   MCP server on stdin/stdout
  dsh-terminal headless [--config <cordis.yml>] [--cwd <dir>]   JSON lines on stdin/stdout
  dsh-terminal --help | --version

  --config  the composition to load (default: ./cordis.yml, else the repository's cordis.yml)
  --cwd     the directory to run in, i.e. the workspace of \`workspaceRoot: .\` (an empty value is ignored)

Headless lines: {"id": 1, "tool": "terminal_open", "arguments": {"type": "shell"}}
           -> {"id": 1, "isError": false, "text": "...", "meta": {...}}
`

/**
 * Parse argv (without node and the script); never throws, a bad command line is a `usage-error`.
 * A lone `--` is dropped: `pnpm start -- --config x` passes it through literally.
 */
export function parseCliArgs(argv: readonly string[]): CliRequest {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(argv.filter((arg) => arg !== '--'))
  } catch (error) {
    return { kind: 'usage-error', message: error instanceof Error ? error.message : String(error) }
  }
  const { values, positionals } = parsed
  if (values.help) return { kind: 'help' }
  if (values.version) return { kind: 'version' }
  const [command, ...extra] = positionals
  if (command !== 'mcp' && command !== 'headless') {
    return { kind: 'usage-error', message: command ? `unknown command "${command}"` : 'missing command: mcp or headless' }
  }
  if (extra.length) return { kind: 'usage-error', message: `unexpected argument "${extra[0]}"` }
  const request: CliRequest = { kind: 'run', command }
  if (values.config !== undefined) {
    if (!values.config) return { kind: 'usage-error', message: '--config needs a path' }
    request.config = values.config
  }
  if (values.cwd) request.cwd = values.cwd
  return request
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      config: { type: 'string' },
      cwd: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
    },
  })
}
