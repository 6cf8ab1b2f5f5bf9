import { parseArgs } from 'node:util'
import { isPresetName, PRESETS, type PresetName } from '../compose/config-path'
import { type ListenAddress, parseHttpFlags } from '../mcp/http-address'
import { errorMessage } from 'dsh-basics'

/** The two ways to serve a composition; `mcp` when the command line names none. */
export type Command = 'mcp' | 'headless'

/** The web view's port when `--web` comes without one: the kernel picks a free port. */
const DEFAULT_WEB_PORT = 0

/** What the command line asked for. */
export type CliRequest =
  | {
      kind: 'run'
      command: Command
      config?: string
      preset?: PresetName
      cwd?: string
      http?: ListenAddress
      idleTimeoutMs?: number
      quietIdleTimeoutMs?: number
      web?: number
      /** `--metrics PORT` (stdio mcp): serve /metrics on 127.0.0.1:PORT. */
      metrics?: number
      /** `--metrics-without-token` (with --http): /metrics answers without the bearer token. */
      metricsWithoutToken?: boolean
    }
  | { kind: 'attach'; sessionId?: string; readOnly: boolean }
  | { kind: 'audit-verify'; file: string }
  | { kind: 'doctor'; config?: string; preset?: PresetName; cwd?: string; json: boolean }
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'usage-error'; message: string }

/** The usage text (printed on stdout for --help, on stderr after a usage error). */
export const USAGE = `Usage:
  dsh-terminal-mcp [mcp]    [--config <cordis.yml> | --preset <name>] [--cwd <dir>] [--web [port]]   MCP server on stdin/stdout
  dsh-terminal-mcp headless [--config <cordis.yml> | --preset <name>] [--cwd <dir>]   JSON lines on stdin/stdout
  dsh-terminal-mcp [mcp] --http [host:]port [--idle-timeout 30m] [--idle-timeout-quiet 5m] [--config … | --preset …] [--cwd …]   MCP over Streamable HTTP
  dsh-terminal-mcp attach [<session>] [--read-only]   list the running hosts' sessions, or watch and type into one
  dsh-terminal-mcp doctor [--config … | --preset …] [--cwd …] [--json]   what this machine confines, and how to fix what it lacks
  dsh-terminal-mcp audit verify <file>   check an audit log's hash chain (exit 0 intact, 1 with the first break)
  dsh-terminal-mcp replay FILE [--speed N] [--from-marker K]   play a session recording (asciicast) in this terminal
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
  --durable same as --preset durable: terminals live in the per-user session host and a client's end
            detaches its sessions for 15 min instead of closing them (terminal_open resume adopts one).
  --cwd     the directory to run in, i.e. the workspace of \`workspaceRoot: .\` (an empty value is ignored)
  --http    serve MCP at http://host:port/mcp instead of stdio; host defaults to 127.0.0.1 (loopback),
            port 0 picks a free one. Write IPv6 as [::1]:8080; 0.0.0.0:8080 listens on every interface.
            Every request needs "Authorization: Bearer <token>": the token printed on stderr at
            startup, or the value of DSH_TERMINAL_TOKEN when set. Each MCP session is one agent.
  --idle-timeout  with --http: close a session (its terminals and jobs) after this long without a
            request or open stream (default 30m; e.g. 90s, 1h; 0 = never)
  --idle-timeout-quiet  with --http: close it already after this long when it holds no work: no
            terminal running a command, no running job, nobody attached (default 5m; 0 = off)
  --web [port]  with mcp: also serve a browser view of the sessions on 127.0.0.1:port (default: a
            free port; the URL is printed on stderr)
  --metrics <port>  with mcp on stdio: serve Prometheus metrics at http://127.0.0.1:port/metrics
            (loopback only; 0 picks a free port, printed on stderr). --http serves /metrics itself
  --metrics-without-token  with --http: /metrics answers without the bearer token (for a scraper
            that cannot send one); every other path still needs it

  attach    from another terminal, as the same user: with no session, a table of every running
            host's sessions; with one (pty-3, or <host pid>:pty-3), show its screen and forward your
            keystrokes. Ctrl-] detaches (the session keeps running). --read-only only watches. While
            another person holds the keyboard (an attach or the web view), you watch read-only. Hosts listen on a private Unix
            socket in /tmp/dsh-terminal/<uid>, whatever their environment; sandboxes hide it.

  replay    plays a recording of the flight recorder (--preset recorded; any asciicast v2 file) on
            stdout as it was printed: --speed 2 twice as fast, --speed 0 at once; pauses longer than
            2 s are cut to 2 s. --from-marker K starts at send K (what was printed before is left out).

  doctor    loads the composition, says its sandbox mode and network, checks bubblewrap, user
            namespaces, AppArmor, seccomp, TIOCSTI and cgroups, and starts a trial sandbox; each
            missing piece comes with the command that fixes it. Exit status 0 only where the trial
            sandbox confines (a composition without a sandbox: 0 when nothing is missing).

Headless lines: {"id": 1, "tool": "terminal_open", "arguments": {"type": "shell"}}
           -> {"id": 1, "isError": false, "text": "...", "meta": {...}}
`

/**
 * Parse argv (without node and the script); never throws, a bad command line is a `usage-error`.
 * A lone `--` is dropped: `pnpm start -- --config x` passes it through literally.
 */
export function parseCliArgs(argv: readonly string[]): CliRequest {
  let parsed: ReturnType<typeof parse>
  let web: number | undefined
  try {
    // `--durable` is `--preset durable`: sessions in the session host, detached when a client goes.
    const withoutWeb = takeWebFlag(argv.filter((arg) => arg !== '--').flatMap((arg) => (arg === '--durable' ? ['--preset', 'durable'] : [arg])))
    web = withoutWeb.web
    parsed = parse(withoutWeb.rest)
  } catch (error) {
    return { kind: 'usage-error', message: parseFailure(error) }
  }
  const { values, positionals } = parsed
  if (values.help) return { kind: 'help' }
  if (values.version) return { kind: 'version' }
  const [command = 'mcp', ...extra] = positionals
  if (command === 'attach') return attachRequest(extra, values, web)
  if (command === 'doctor') return doctorRequest(extra, values, web)
  if (command === 'audit') return auditRequest(extra, values, web)
  if (values.json) return { kind: 'usage-error', message: '--json goes with doctor' }
  if (command !== 'mcp' && command !== 'headless') return { kind: 'usage-error', message: `unknown command "${command}"` }
  if (extra.length) return { kind: 'usage-error', message: `unexpected argument "${extra[0]}"` }
  if (values['read-only']) return { kind: 'usage-error', message: '--read-only goes with attach' }
  if (web !== undefined && command !== 'mcp') return { kind: 'usage-error', message: '--web goes with the mcp command' }
  const request: CliRequest = { kind: 'run', command, ...(web !== undefined ? { web } : {}) }
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
  if (values.metrics !== undefined) {
    if (command !== 'mcp' || values.http !== undefined) {
      return { kind: 'usage-error', message: '--metrics goes with mcp on stdio (--http serves /metrics on its own port)' }
    }
    if (!/^\d{1,5}$/.test(values.metrics) || Number(values.metrics) > 65_535) {
      return { kind: 'usage-error', message: `--metrics wants a port number (0-65535), not "${values.metrics}"` }
    }
    request.metrics = Number(values.metrics)
  }
  if (values['metrics-without-token']) {
    if (values.http === undefined) return { kind: 'usage-error', message: '--metrics-without-token goes with --http' }
    request.metricsWithoutToken = true
  }
  if (values.http !== undefined || values['idle-timeout'] !== undefined || values['idle-timeout-quiet'] !== undefined) {
    try {
      Object.assign(request, parseHttpFlags(command, values.http, values['idle-timeout'], values['idle-timeout-quiet']))
    } catch (error) {
      return { kind: 'usage-error', message: errorMessage(error) }
    }
  }
  return request
}

/** `attach [session] [--read-only]`: serving flags make no sense there. */
function attachRequest(extra: readonly string[], values: ReturnType<typeof parse>['values'], web: number | undefined): CliRequest {
  if (extra.length > 1) return { kind: 'usage-error', message: `attach takes one session, got "${extra[1]}" too` }
  const serving = SERVING_FLAGS.find((name) => values[name] !== undefined)
  if (serving || web !== undefined) return { kind: 'usage-error', message: `--${serving ?? 'web'} does not go with attach` }
  return { kind: 'attach', ...(extra[0] ? { sessionId: extra[0] } : {}), readOnly: values['read-only'] === true }
}

/** Flags that only mean something to a host that serves. */
const SERVING_FLAGS = ['config', 'preset', 'cwd', 'http', 'idle-timeout', 'idle-timeout-quiet', 'json', 'metrics', 'metrics-without-token'] as const

/** `audit verify <file>`: check a log; nothing is served. */
function auditRequest(extra: readonly string[], values: ReturnType<typeof parse>['values'], web: number | undefined): CliRequest {
  const [action, file, ...rest] = extra
  if (action !== 'verify')
    return {
      kind: 'usage-error',
      message: action === undefined ? 'audit needs an action: audit verify <file>' : `unknown audit action "${action}" (audit verify <file>)`,
    }
  if (!file) return { kind: 'usage-error', message: 'audit verify needs the log file: audit verify <file>' }
  if (rest.length) return { kind: 'usage-error', message: `audit verify takes one file, got "${rest[0]}" too` }
  const flag = [...SERVING_FLAGS, 'read-only' as const].find((name) => values[name] !== undefined)
  if (flag || web !== undefined) return { kind: 'usage-error', message: `--${flag ?? 'web'} does not go with audit verify` }
  return { kind: 'audit-verify', file }
}

/** `doctor [--config … | --preset …] [--cwd …] [--json]`: the composition to check, nothing served. */
function doctorRequest(extra: readonly string[], values: ReturnType<typeof parse>['values'], web: number | undefined): CliRequest {
  if (extra.length) return { kind: 'usage-error', message: `doctor takes no argument, got "${extra[0]}"` }
  const serving = (['http', 'idle-timeout', 'idle-timeout-quiet', 'read-only', 'metrics', 'metrics-without-token'] as const).find(
    (name) => values[name] !== undefined,
  )
  if (serving || web !== undefined) return { kind: 'usage-error', message: `--${serving ?? 'web'} does not go with doctor` }
  const request: Extract<CliRequest, { kind: 'doctor' }> = { kind: 'doctor', json: values.json === true }
  if (values.config !== undefined) {
    if (!values.config) return { kind: 'usage-error', message: '--config needs a path' }
    request.config = values.config
  }
  if (values.preset !== undefined) {
    if (!isPresetName(values.preset)) return { kind: 'usage-error', message: `unknown preset "${values.preset}": ${Object.keys(PRESETS).join(', ')}` }
    if (request.config !== undefined) return { kind: 'usage-error', message: '--config and --preset exclude each other' }
    request.preset = values.preset
  }
  if (values.cwd) request.cwd = values.cwd
  return request
}

/**
 * Take `--web [port]` (or `--web=port`) out of argv before the strict parse, which cannot express a
 * flag whose value is optional. The next argument is its port only when it is all digits.
 */
function takeWebFlag(argv: readonly string[]): { rest: string[]; web?: number } {
  const rest: string[] = []
  let web: number | undefined
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!
    let value: string | undefined
    if (arg === '--web') {
      const next = argv[index + 1]
      if (next !== undefined && /^\d+$/.test(next)) {
        value = next
        index++
      }
    } else if (arg.startsWith('--web=')) {
      value = arg.slice('--web='.length)
    } else {
      rest.push(arg)
      continue
    }
    if (web !== undefined) throw new Error('--web given twice')
    if (value === undefined) web = DEFAULT_WEB_PORT
    else if (/^\d{1,5}$/.test(value) && Number(value) <= 65_535) web = Number(value)
    else throw new Error(`--web wants a port number (0-65535) or nothing, not "${value}"`)
  }
  return web === undefined ? { rest } : { rest, web }
}

/**
 * Node's parser error as one short clause: its own messages quote oddly (`'--bogus'. To specify a
 * positional argument starting with a '-', …`) and suggest what our command line never takes.
 */
function parseFailure(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code
  // Quoted as '--name', '--name <value>' or, with a short alias, '-h, --help'.
  const option = /'(?:-\w, )?(-[^' ,]+)/.exec(errorMessage(error))?.[1]
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option) return `unknown option ${option}`
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option) {
    return /does not take an argument/.test(errorMessage(error)) ? `${option} takes no value` : `${option} needs a value`
  }
  return errorMessage(error).split('\n')[0]!
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
      'idle-timeout-quiet': { type: 'string' },
      metrics: { type: 'string' },
      'metrics-without-token': { type: 'boolean' },
      'read-only': { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
    },
  })
}
