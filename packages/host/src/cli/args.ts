import { parseArgs } from 'node:util'
import { isPresetName, PRESETS, type PresetName } from '../compose/config-path'
import { type ListenAddress, parseHttpFlags } from '../mcp/http-address'

/** The two ways to serve a composition; `mcp` when the command line names none. */
export type Command = 'mcp' | 'headless'

/** What the command line asked for. */
export type CliRequest =
  | { kind: 'run'; command: Command; config?: string; preset?: PresetName; cwd?: string; http?: ListenAddress; idleTimeoutMs?: number }
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'usage-error'; message: string }

/** The usage text (printed on stdout for --help, on stderr after a usage error). */
export const USAGE = `Usage:
  dsh-terminal-mcp [mcp]    [--config <cordis.yml> | --preset <name>] [--cwd <dir>]   MCP server on stdin/stdout
  dsh-terminal-mcp headless [--config <cordis.yml> | --preset <name>] [--cwd <dir>]   JSON lines on stdin/stdout
  dsh-terminal-mcp [mcp] --http [host:]port [--idle-timeout 30m] [--config … | --preset …] [--cwd …]   MCP over Streamable HTTP
  dsh-terminal-mcp --help | --version
  (dsh-terminal is the same command; with no command, both serve MCP on stdin/stdout)

  --config  the composition to load: a cordis.yml whose entries name the packages (dsh-agent,
            dsh-tools, dsh-terminal, dsh-terminal-bash, …; see the dsh-terminal-mcp README).
            Default: ./cordis.yml if it exists, else the default composition: the repository's
            cordis.yml in a checkout, the copy inside the package once installed (on Linux it needs
            bubblewrap: the bwrap command)
  --preset  a composition shipped with the package instead: ${Object.keys(PRESETS).join(', ')}.
            danger-full-access runs sessions unsandboxed with your full rights (no bubblewrap
            needed, e.g. on macOS)
  --cwd     the directory to run in, i.e. the workspace of \`workspaceRoot: .\` (an empty value is ignored)
  --http    serve MCP at http://host:port/mcp instead of stdio; host defaults to 127.0.0.1 (loopback),
            port 0 picks a free one. Write IPv6 as [::1]:8080; 0.0.0.0:8080 listens on every interface.
            Every request needs "Authorization: Bearer <token>": the token printed on stderr at
            startup, or the value of DSH_TERMINAL_TOKEN when set. Each MCP session is one agent.
  --idle-timeout  with --http: close a session (its terminals and jobs) after this long without a
            request or open stream (default 30m; e.g. 90s, 1h; 0 = never)

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
  const [command = 'mcp', ...extra] = positionals
  if (command !== 'mcp' && command !== 'headless') return { kind: 'usage-error', message: `unknown command "${command}"` }
  if (extra.length) return { kind: 'usage-error', message: `unexpected argument "${extra[0]}"` }
  const request: CliRequest = { kind: 'run', command }
  if (values.config !== undefined) {
    if (!values.config) return { kind: 'usage-error', message: '--config needs a path' }
    request.config = values.config
  }
  if (values.preset !== undefined) {
    if (!isPresetName(values.preset)) {
      return { kind: 'usage-error', message: `unknown preset "${values.preset}": ${Object.keys(PRESETS).join(', ')}` }
    }
    if (request.config !== undefined) return { kind: 'usage-error', message: '--config and --preset exclude each other' }
    request.preset = values.preset
  }
  if (values.cwd) request.cwd = values.cwd
  if (values.http !== undefined || values['idle-timeout'] !== undefined) {
    try {
      Object.assign(request, parseHttpFlags(command, values.http, values['idle-timeout']))
    } catch (error) {
      return { kind: 'usage-error', message: error instanceof Error ? error.message : String(error) }
    }
  }
  return request
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      config: { type: 'string' },
      preset: { type: 'string' },
      cwd: { type: 'string' },
      http: { type: 'string' },
      'idle-timeout': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
    },
  })
}
