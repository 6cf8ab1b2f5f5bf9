import { accessSync, constants } from 'node:fs'
import { defaultNetwork, type SandboxNetwork } from 'dsh-sandbox'
import { type CheckState, diagnoseSandbox, type SandboxCheck, type SandboxDiagnosis } from 'dsh-sandbox-local'
import { detectLimitPlacement } from 'dsh-subprocess-local'
import { errorMessage } from 'dsh-basics'
import { loadComposition } from '../compose/load-config'

/** What `doctor` checks: a composition, reported as text or as one JSON object. */
export interface DoctorOptions {
  readonly configPath: string
  readonly json: boolean
  /** Where the report goes; default stdout. */
  readonly write?: (text: string) => void
}

/** The composition's sandbox as loaded: its default mode, the network a confined session gets, and its provider's diagnosis. */
interface CompositionSandbox {
  readonly mode: string
  readonly network?: SandboxNetwork
  /** Where the `allowlist` network connects. */
  readonly allowedHosts?: readonly string[]
  readonly provider: boolean
  readonly diagnosis?: SandboxDiagnosis
}

/** One report: the composition's sandbox, every check, and the verdict `doctor` exits on. */
export interface DoctorReport {
  readonly configPath: string
  readonly mode: string
  readonly network?: SandboxNetwork
  readonly confines: boolean
  readonly checks: readonly SandboxCheck[]
  /** Whether the composition's sessions are confined as it asks: the exit status is 0 only then. */
  readonly ready: boolean
}

/**
 * `dsh-terminal-mcp doctor`: load the composition as a server would, say which sandbox mode and
 * network its sessions get, check what confinement needs on this machine (the provider's own
 * diagnosis, with its configured bubblewrap) and the cgroups that enforce session limits, then unload
 * it. Resolves with the exit status: 0 when the composition's sessions can run as it asks.
 */
export async function runDoctor(options: DoctorOptions): Promise<number> {
  const write = options.write ?? ((text: string) => void process.stdout.write(text))
  let report: DoctorReport
  try {
    report = await diagnose(options.configPath)
  } catch (error) {
    write(`dsh-terminal doctor: ${options.configPath} did not load: ${errorMessage(error)}\n`)
    return 1
  }
  write(options.json ? `${JSON.stringify(report)}\n` : formatReport(report))
  return report.ready ? 0 : 1
}

async function diagnose(configPath: string): Promise<DoctorReport> {
  const sandbox = await compositionSandbox(configPath)
  const confined = sandbox.mode !== 'danger-full-access'
  // Without a provider in the composition, the machine is still checked: the user may add one.
  const diagnosis = sandbox.diagnosis ?? (await diagnoseSandbox())
  const checks: SandboxCheck[] = [compositionCheck(sandbox), ...diagnosis.checks, ...cgroupChecks()]
  const ready = confined ? sandbox.provider && diagnosis.confines : true
  const report: DoctorReport = { configPath, mode: sandbox.mode, confines: diagnosis.confines, checks, ready }
  return sandbox.network ? { ...report, network: sandbox.network } : report
}

/** Load the composition, read its policy and ask its sandbox provider for a diagnosis, then unload it. */
async function compositionSandbox(configPath: string): Promise<CompositionSandbox> {
  const logged: string[] = []
  const composition = await loadComposition({ configPath, log: (line) => logged.push(line) })
  try {
    const root = composition.root
    const policy = root.get('sandboxPolicy')
    const agent = await composition.agents.create()
    const resolved = policy?.resolve(agent)
    await agent.dispose()
    const mode = resolved?.mode ?? 'danger-full-access'
    const network = resolved && resolved.mode !== 'danger-full-access' ? (resolved.network ?? defaultNetwork(resolved.mode)) : undefined
    const provider = root.get('sandbox') as { diagnose?: () => Promise<SandboxDiagnosis> } | undefined
    const diagnosis = typeof provider?.diagnose === 'function' ? await provider.diagnose() : undefined
    const found: CompositionSandbox = {
      mode,
      provider: provider !== undefined,
      ...(diagnosis ? { diagnosis } : {}),
      ...(network === 'allowlist' ? { allowedHosts: resolved?.allowedHosts ?? [] } : {}),
    }
    return network ? { ...found, network } : found
  } finally {
    await composition.dispose()
  }
}

function compositionCheck(sandbox: CompositionSandbox): SandboxCheck {
  if (sandbox.mode === 'danger-full-access') {
    return { name: 'composition', state: 'info', detail: 'danger-full-access: sessions run unsandboxed, with your full rights' }
  }
  const network = networkWords(sandbox)
  if (!sandbox.provider) {
    return {
      name: 'composition',
      state: 'missing',
      detail: `${sandbox.mode} asks for a sandbox, but no sandbox provider is composed`,
      fix: 'add dsh-sandbox-local to the composition, or use --preset danger-full-access',
    }
  }
  return { name: 'composition', state: 'ok', detail: `${sandbox.mode}, ${network}` }
}

/** What a confined session's network is, in words: the allowlist names its hosts (the first few). */
function networkWords(sandbox: CompositionSandbox): string {
  if (sandbox.network === 'none') return 'no network (loopback only)'
  if (sandbox.network !== 'allowlist') return "the host's network"
  const hosts = sandbox.allowedHosts ?? []
  if (hosts.length === 0) return 'no network: an egress proxy that allows no host (allowedHosts is empty)'
  const shown = hosts.slice(0, 5).join(', ')
  return `no network but an egress proxy to ${hosts.length} allowed host${hosts.length === 1 ? '' : 's'} (${shown}${hosts.length > 5 ? ', …' : ''})`
}

/** One line per session limit: enforced by which cgroup hierarchy, or why not (sessions then start without that cap). */
function cgroupChecks(): SandboxCheck[] {
  const placement = detectLimitPlacement()
  const checks: SandboxCheck[] = []
  for (const hierarchy of placement.hierarchies) {
    const limits = `${hierarchy.controllers.join(', ')} limits in cgroup v${hierarchy.version} under ${hierarchy.base}`
    checks.push(
      writable(hierarchy.base)
        ? { name: 'cgroups', state: 'ok', detail: limits }
        : { name: 'cgroups', state: 'warn', detail: `${limits}, which this user cannot write: sessions start without those caps` },
    )
  }
  for (const [controller, reason] of placement.unavailable) {
    checks.push({ name: 'cgroups', state: 'warn', detail: `no ${controller} limit per session: ${reason}` })
  }
  return checks
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK)
    return true
  } catch {
    return false
  }
}

const STATE_WIDTH = 8
const NAME_WIDTH = 16

/** The report as aligned lines: state, check, what it showed, and an indented `fix:` under anything not fine. */
export function formatReport(report: DoctorReport): string {
  const lines = [`dsh-terminal doctor: ${report.configPath}`]
  for (const check of report.checks) {
    lines.push(`  ${check.state.padEnd(STATE_WIDTH)} ${check.name.padEnd(NAME_WIDTH)} ${check.detail}`)
    if (check.fix) lines.push(`  ${''.padEnd(STATE_WIDTH)} ${''.padEnd(NAME_WIDTH)} fix: ${check.fix}`)
  }
  lines.push(verdict(report))
  return `${lines.join('\n')}\n`
}

function verdict(report: DoctorReport): string {
  if (report.mode === 'danger-full-access') return 'Sessions run unsandboxed, as this composition asks.'
  if (report.ready) return `Sessions are confined (${report.mode}).`
  const missing = report.checks.filter((check) => check.state === ('missing' satisfies CheckState)).map((check) => check.name)
  return `Sessions cannot be confined here (${missing.join(', ')}): apply the fixes above, or start with --preset danger-full-access to run them unsandboxed.`
}
