import type { Context, Logger } from '@deepseek-ai/cordis'
import { lstatSync, realpathSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname } from 'node:path'
import {
  type AheadConfinement,
  assertConfineRequest,
  defaultNetwork,
  ensureRuntimeParent,
  HOST_RUNTIME_PARENT,
  isWithin,
  Sandbox,
  SandboxError,
  type SandboxPolicy,
} from 'dsh-sandbox'
import type { LocalSandboxConfig } from './config'
import { CONTROL_SOCKETS } from './control-sockets'
import { planCredentialMasks } from './credentials'
import { hostRuntimeCover } from './host-runtime-cover'
import { hostInstallationRoots } from './host-installation'
import { FifoPool } from './fifo-pool'
import { checkedBwrapArgv } from './launch'
import { probeBwrap } from './probe'
import type { MountPlan } from './args'
import { planInputs, planMounts, type ProtectionSources } from './protected-paths'
import { SearchTrace } from './search-trace'
import { canonicalHome, homesDirectory, planPrivateHome } from './private-home'
import { filterGuard, installSeccompFilter } from './seccomp/filter-file'
import { StartGate } from './start-gate'
import { diagnoseSandbox, type SandboxDiagnosis } from './doctor'
import { readLegacyTiocsti, type TiocstiFact } from './tiocsti'
import { errorMessage } from 'dsh-basics'
import { EgressProxies } from './egress/egress-proxies'
import { egressEnvironment, systemPerl } from './egress/in-sandbox'
import type { EgressRefusal } from './egress/proxy'

declare module '@deepseek-ai/cordis' {
  interface Events {
    /** The `allowlist` network's proxy refused a request: which host, through which protocol, and why. */
    'sandbox/egress-refused'(refusal: EgressRefusal): void
  }
}

/** What the one-time probe learned about this host. */
export interface HostFacts {
  /** Absolute path of the bwrap binary that started a confining trial sandbox. */
  bwrapPath: string
  /** Whether sandboxes get a user namespace of their own (the trial proved confinement either way). */
  userNamespace: boolean
  /** The private file holding the seccomp program every sandbox loads (see `installSeccompFilter`). */
  seccompFilter: string
  /** Whether TIOCSTI terminal input injection is allowed on this kernel. */
  legacyTiocsti: TiocstiFact
  /** Canonical roots of the host's own code, kept read-only when they lie in a writable workspace. */
  installationRoots: readonly string[]
}

/**
 * `ctx.sandbox` backed by bubblewrap. The host is probed once, lazily, on the first `confine()`
 * (or an explicit `probe()`); a failed probe is remembered and every later call fails closed.
 */
export class LocalSandbox extends Sandbox {
  private readonly config: LocalSandboxConfig
  private readonly log: Logger
  private readonly memo: { probe?: Promise<HostFacts>; warnedInstallation?: boolean; gate?: StartGate; egress?: EgressProxies } = {}
  /** Aborted when the plugin unloads: every sandbox started ahead is dropped then (see {@link confineAhead}). */
  private readonly expiry = new AbortController()

  constructor(ctx: Context, config: LocalSandboxConfig) {
    super(ctx)
    this.config = config
    this.log = ctx.logger('sandbox-local')
    ctx.effect(
      () => () => {
        this.expiry.abort()
        this.memo.gate?.dispose()
        return this.memo.egress?.close()
      },
      'sandbox-local: close the unused start FIFOs, expire the sandboxes started ahead, stop the egress proxies',
    )
  }

  /**
   * Probe the host once and return what it found; rejects with `SANDBOX_UNAVAILABLE` naming the fix.
   * Hosts may call it at startup to fail early; `confine()` calls it anyway.
   */
  probe(): Promise<HostFacts> {
    this.memo.probe ??= this.checkHost()
    return this.memo.probe
  }

  /** Wrap `argv` in bwrap under `policy`; see the package README for the exact confinement. */
  async confine(argv: readonly string[], policy: SandboxPolicy): Promise<string[]> {
    return this.launch(argv, await this.plan(argv, policy))
  }

  /**
   * What a command confined under `policy` needs in its environment: under the `allowlist` network,
   * the proxy variables (`HTTP(S)_PROXY`, `ALL_PROXY`, `NO_PROXY`, `GIT_SSH_COMMAND`) that point at
   * the sandbox's forwarder; nothing otherwise.
   */
  override environment(policy: SandboxPolicy): Readonly<Record<string, string>> {
    return (policy.network ?? defaultNetwork(policy.mode)) === 'allowlist' ? egressEnvironment() : {}
  }

  /**
   * Confine `argv` (a launcher told its cwd later) ahead of need: the same sandbox `confine` makes,
   * started in the workspace root, and current while nothing its mount plan was made from changed
   * (the git search's trace, the control sockets, private and configured paths). Undefined when a
   * start ahead could not be re-checked (see `SearchTrace`) or would print a notice first.
   */
  override async confineAhead(argv: readonly string[], policy: SandboxPolicy): Promise<AheadConfinement | undefined> {
    const expired = this.expiry.signal
    if (expired.aborted) return undefined
    const facts = await this.probe()
    // A workspace that is the host's installation prints a notice first, which a waiting launcher cannot.
    if (policy.mode === 'workspace-write' && facts.installationRoots.includes(canonicalDirectory(policy.workspaceRoot))) return undefined
    const trace = new SearchTrace()
    const start = await this.plan(argv, { ...policy, cwd: policy.workspaceRoot }, trace)
    if (start.notice !== undefined || !trace.usable) return undefined
    const confined = await this.launch(argv, start)
    const { workspaceRoot } = start.policy
    const writable = policy.mode === 'workspace-write'
    const homeInputs = this.homeInputs(start.plan)
    return {
      argv: confined,
      expired,
      current: () =>
        !expired.aborted &&
        trace.matches() &&
        planInputs(workspaceRoot, writable, start.sources) === start.inputs &&
        this.homeInputs(this.homeAndMasks(workspaceRoot, writable)) === homeInputs,
    }
  }

  /**
   * What a start's private home and credential masks were planned from, as one comparable string:
   * the dotfiles shown, the credentials masked or opened, and the private directory's identity (one
   * deleted and made again is another directory). A sandbox started ahead is current only while
   * this is unchanged: a credential created since would not be masked in it.
   */
  private homeInputs(plan: Pick<MountPlan, 'home' | 'masks' | 'opened'>): string {
    let directory = ''
    if (plan.home !== undefined) {
      try {
        const stat = lstatSync(plan.home.source)
        directory = `${stat.dev}:${stat.ino}`
      } catch {
        directory = 'missing'
      }
    }
    return JSON.stringify([plan.home ?? null, plan.masks ?? [], plan.opened ?? [], directory])
  }

  /** Everything one start is made from: the canonical policy, the mount plan, the filter, the notice. */
  private async plan(argv: readonly string[], policy: SandboxPolicy, trace?: SearchTrace): Promise<PlannedStart> {
    assertConfineRequest(argv, policy)
    const workspaceRoot = canonicalDirectory(policy.workspaceRoot)
    if (policy.mode === 'workspace-write' && workspaceRoot === '/') {
      throw new SandboxError(
        'INVALID_POLICY',
        'workspace root "/" would make the whole filesystem writable; choose a project directory, or danger-full-access explicitly',
      )
    }
    if (workspaceRoot === sharedTemporaryDirectory()) {
      throw new SandboxError(
        'INVALID_POLICY',
        `workspace root ${workspaceRoot} is the machine's shared temporary directory: binding it would show every user's and program's sockets there (tmux, ssh and gpg agents, X11) to the sandbox, whose private /tmp it replaces; choose a project directory, e.g. ${workspaceRoot}/project`,
      )
    }
    // Binding the host's /proc, /dev or /sys over the sandbox's masks would show every host process (and its root) or a writable /sys.
    const replaced = REPLACED_FILESYSTEMS.find((root) => isWithin(root, workspaceRoot))
    if (replaced !== undefined) {
      throw new SandboxError(
        'INVALID_POLICY',
        `workspace root ${workspaceRoot} lies in ${replaced}, which the sandbox replaces with its own; choose a project directory`,
      )
    }
    const facts = await this.probe()
    const confined: SandboxPolicy = { mode: policy.mode, workspaceRoot }
    if (policy.cwd !== undefined) confined.cwd = policy.cwd
    if (policy.network !== undefined) confined.network = policy.network
    const allowlist = (policy.network ?? defaultNetwork(policy.mode)) === 'allowlist'
    if (allowlist) confined.allowedHosts = [...(policy.allowedHosts ?? [])]
    if (policy.readableFiles !== undefined) confined.readableFiles = canonicalReadableFiles(policy.readableFiles)
    const writable = policy.mode === 'workspace-write'
    const sources = { config: this.config, installationRoots: facts.installationRoots, controlSockets: this.controlSockets() }
    const hostRuntimeParent = hostRuntimeCover(workspaceRoot, confined.readableFiles ?? [], this.hostRuntimeParent())
    // Read before the plan: a change between the two shows as a difference when a sandbox started ahead is taken.
    const inputs = planInputs(workspaceRoot, writable, sources)
    const mounts = await planMounts(workspaceRoot, writable, facts.userNamespace, sources, trace)
    const egress = allowlist ? { directory: (await this.egressProxies().open(confined.allowedHosts ?? [])).path, perl: systemPerl() } : undefined
    const plan = {
      ...mounts,
      ...(hostRuntimeParent ? { hostRuntimeParent } : {}),
      ...this.homeAndMasks(workspaceRoot, writable),
      ...(egress === undefined ? {} : { egress }),
    }
    // Read-only in effect: the host's log says it once, and every session above its first prompt.
    const readOnlyWorkspace = writable && plan.readOnly.some((path) => path === workspaceRoot)
    if (readOnlyWorkspace) this.warnWorkspaceIsInstallation(workspaceRoot)
    // Checked at every start, so a temp cleaner or a writable workspace never leaves a wrong filter;
    // a workspace holding the file keeps it read-only inside.
    const seccompFilter = await installSeccompFilter(dirname(facts.seccompFilter))
    const guard = writable ? filterGuard(workspaceRoot, seccompFilter) : undefined
    const guarded = guard === undefined ? plan : { ...plan, readOnly: [...plan.readOnly, guard] }
    const notice = readOnlyWorkspace ? installationNotice(workspaceRoot) : undefined
    return { launch: { bwrapPath: facts.bwrapPath, seccompFilter }, policy: confined, plan: guarded, notice, inputs, sources }
  }

  /** The held argv of a planned start (see `checkedBwrapArgv`). */
  private launch(argv: readonly string[], start: PlannedStart): Promise<string[]> {
    return checkedBwrapArgv(start.launch, argv, start.policy, start.plan, (check) => this.startGate().hold(check), undefined, start.notice)
  }

  /**
   * Gather the host facts. Overridable so tests can drive the failure paths without breaking the
   * host; production code never overrides it.
   */
  protected async probeHost(): Promise<HostFacts> {
    const [bwrap, legacyTiocsti] = await Promise.all([probeBwrap(this.config.bwrapPath), readLegacyTiocsti()])
    return {
      bwrapPath: bwrap.path,
      userNamespace: bwrap.userNamespace,
      seccompFilter: bwrap.seccompFilter,
      legacyTiocsti,
      installationRoots: hostInstallationRoots(),
    }
  }

  /** What this host confines and how, with the configured bubblewrap (see `diagnoseSandbox`; for `doctor`). */
  diagnose(): Promise<SandboxDiagnosis> {
    return diagnoseSandbox(this.config.bwrapPath)
  }

  /**
   * The socket paths hidden when present (see `CONTROL_SOCKETS`). Overridable so a test can plant a
   * socket of its own instead of touching the host's `/run`; production code never overrides it.
   */
  protected controlSockets(): readonly string[] {
    return CONTROL_SOCKETS
  }

  /**
   * Where hosts keep their attach sockets (`HOST_RUNTIME_PARENT`). Overridable so a test can plant a
   * host directory of its own instead of touching the real one; production code never overrides it.
   */
  protected hostRuntimeParent(): string {
    return HOST_RUNTIME_PARENT
  }

  /**
   * The host user's home, which a sandbox gets a private copy of. Overridable so a test can use a
   * home of its own instead of the real one; production code never overrides it.
   */
  protected hostHome(): string | undefined {
    return process.env.HOME || homedir()
  }

  /** Whether the host runs as root (then `/root` is masked too); overridable for tests like {@link LocalSandbox.hostHome}. */
  protected hostIsRoot(): boolean {
    return process.getuid?.() === 0
  }

  /** The private home and the credential masks of one start (see private-home and credentials). */
  private homeAndMasks(workspaceRoot: string, writable: boolean): Pick<MountPlan, 'home' | 'masks' | 'opened'> {
    const home = canonicalHome(this.hostHome())
    const { config } = this
    const privateHome =
      config.privateHome && home !== undefined
        ? planPrivateHome({ home, workspaceRoot, writable, files: config.homeFiles, homes: homesDirectory(config.homesDirectory, home) })
        : undefined
    const credentials = planCredentialMasks({ home, privateHome, workspaceRoot, writable, readablePaths: config.readablePaths, isRoot: this.hostIsRoot() })
    return {
      ...(privateHome === undefined ? {} : { home: { ...privateHome, files: credentials.homeFiles } }),
      masks: credentials.masks,
      opened: credentials.opened,
    }
  }

  /**
   * Holds starts for the host's mount check (see start-gate), with FIFOs made in the host runtime
   * parent, which every sandbox hides; made on the first start that needs one.
   */
  private startGate(): StartGate {
    this.memo.gate ??= new StartGate(new FifoPool(() => ensureRuntimeParent(this.hostRuntimeParent())), (message) =>
      this.log.warn('refused a sandbox start: %s', message),
    )
    return this.memo.gate
  }

  /**
   * The egress proxies of the `allowlist` network, one per sandbox, in the host runtime parent
   * (hidden in every sandbox); a refusal is logged with the host it named.
   */
  private egressProxies(): EgressProxies {
    this.memo.egress ??= new EgressProxies({
      runtimeParent: () => ensureRuntimeParent(this.hostRuntimeParent()),
      fixedAddresses: this.config.egressAddresses,
      perl: systemPerl,
      onRefused: (refusal) => this.reportEgressRefusal(refusal),
    })
    return this.memo.egress
  }

  /** Log a refused egress request and tell listeners (`sandbox/egress-refused`). */
  private reportEgressRefusal(refusal: EgressRefusal): void {
    this.log.warn('egress refused (%s, %s): %s', refusal.protocol, refusal.reason, refusal.detail)
    this.ctx.emit('sandbox/egress-refused', refusal)
  }

  /** Say once that a writable workspace is read-only in effect, because the host's code is all of it. */
  private warnWorkspaceIsInstallation(workspaceRoot: string): void {
    if (this.memo.warnedInstallation) return
    this.memo.warnedInstallation = true
    this.log.warn(
      "the workspace %s is the host's own installation: it stays read-only inside sandboxes (protectHostInstallation); choose another workspace to let sessions write",
      workspaceRoot,
    )
  }

  private async checkHost(): Promise<HostFacts> {
    let facts: HostFacts
    try {
      facts = await this.probeHost()
    } catch (error) {
      const advised = withDoctorAdvice(error)
      this.log.warn('sandbox unavailable, confined processes will be refused: %s', errorMessage(advised))
      throw advised
    }
    if (facts.legacyTiocsti.enabled) {
      const risk =
        `TIOCSTI terminal input injection is allowed by the kernel (${facts.legacyTiocsti.detail}): the sandbox's seccomp ` +
        'filter refuses it inside every sandbox, but processes outside it (and a sandbox without the filter) can still push input into their terminal'
      if (this.config.legacyTiocsti === 'refuse') {
        const error = withDoctorAdvice(
          new SandboxError(
            'SANDBOX_UNAVAILABLE',
            `${risk}; legacyTiocsti is "refuse": disable it with sysctl -w dev.tty.legacy_tiocsti=0, or set legacyTiocsti: warn`,
          ),
        )
        this.log.warn('sandbox unavailable: %s', errorMessage(error))
        throw error
      }
      // One short line: the sandbox is safe either way, so this is advice, not an alarm.
      this.log.warn('%s', tiocstiAdvice(facts.legacyTiocsti))
    }
    return facts
  }
}

/**
 * A refusal to confine names the way out for whoever reads it (a person, or a model that tells one):
 * `dsh-terminal-mcp doctor` says what this machine lacks and the command that fixes it, and the
 * danger-full-access preset runs sessions without a sandbox. Other errors pass unchanged.
 */
export function withDoctorAdvice(error: unknown): unknown {
  if (!(error instanceof SandboxError) || error.code !== 'SANDBOX_UNAVAILABLE') return error
  return new SandboxError(
    'SANDBOX_UNAVAILABLE',
    `${error.message}. Run \`dsh-terminal-mcp doctor\` on the host to see what it lacks and how to fix it, ` +
      "or start the server with --preset danger-full-access to run sessions unsandboxed (with the user's full rights)",
    { cause: error },
  )
}

/** One start as planned, before its FIFOs are taken. */
interface PlannedStart {
  readonly launch: { readonly bwrapPath: string; readonly seccompFilter: string }
  readonly policy: SandboxPolicy
  readonly plan: MountPlan
  readonly notice: string | undefined
  /** `planInputs` as read before the plan. */
  readonly inputs: string
  readonly sources: ProtectionSources
}

/** What a session in a workspace that is the host's own installation prints above its first prompt. */
function installationNotice(workspaceRoot: string): string {
  return `dsh-sandbox: ${workspaceRoot} is this server's own installation, kept read-only here (writes fail with "Read-only file system"); start the server in a project directory (--cwd DIR) to work there`
}

/** The one-line warning for a kernel that allows TIOCSTI: what it means here and the command that turns it off. */
function tiocstiAdvice(fact: TiocstiFact): string {
  return `TIOCSTI input injection is allowed (${fact.detail}); sandboxes block it, unconfined processes can use it. Off: sysctl -w dev.tty.legacy_tiocsti=0`
}

/*
 * The host's own look at the request (canonical paths, file kinds) is a few synchronous calls of
 * microseconds each: one thread-pool round trip apiece cost a session start more than the calls.
 */

function canonicalDirectory(path: string): string {
  let real: string
  try {
    real = realpathSync.native(path)
  } catch (error) {
    throw new SandboxError('INVALID_POLICY', `workspace root ${path} does not exist or is unreadable (${errorMessage(error)})`, { cause: error })
  }
  if (!statSync(real).isDirectory()) {
    throw new SandboxError('INVALID_POLICY', `workspace root ${path} is not a directory`)
  }
  return real
}

/**
 * The host's /tmp, which every sandbox replaces with a private one: as a workspace it would come back
 * whole, with sockets no mount can hide one by one (connect(2) ignores read-only mounts).
 */
const SHARED_TEMPORARY_DIRECTORY = '/tmp'

/** The shared temporary directory's canonical path (compared with canonical workspaces), looked up once. */
let sharedTemporary: string | undefined
function sharedTemporaryDirectory(): string {
  if (sharedTemporary === undefined) {
    try {
      sharedTemporary = realpathSync.native(SHARED_TEMPORARY_DIRECTORY)
    } catch {
      sharedTemporary = SHARED_TEMPORARY_DIRECTORY
    }
  }
  return sharedTemporary
}

/** Kernel filesystems the sandbox replaces with its own or masks parts of: a host file bound from there would bypass that. */
const REPLACED_FILESYSTEMS = ['/proc', '/dev', '/sys']

/**
 * Each readable file at its canonical path, once. Only a regular file qualifies: a directory could
 * hold a control socket, and a socket or device would be a way out rather than something to read.
 */
function canonicalReadableFiles(paths: readonly string[]): string[] {
  const canonical = new Set<string>()
  for (const path of paths) {
    let real: string
    try {
      real = realpathSync.native(path)
    } catch (error) {
      throw new SandboxError('INVALID_POLICY', `readable file ${path} does not exist or is unreadable (${errorMessage(error)})`, { cause: error })
    }
    if (REPLACED_FILESYSTEMS.some((root) => isWithin(root, real))) {
      throw new SandboxError('INVALID_POLICY', `readable file ${path} lies in ${real}, which the sandbox replaces with its own; name a file elsewhere`)
    }
    if (!statSync(real).isFile()) {
      throw new SandboxError('INVALID_POLICY', `readable file ${path} is not a regular file; only regular files can be made readable`)
    }
    canonical.add(real)
  }
  return [...canonical]
}
