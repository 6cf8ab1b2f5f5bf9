import type { Context, Logger } from '@deepseek-ai/cordis'
import { realpathSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname } from 'node:path'
import { assertConfineRequest, ensureRuntimeParent, HOST_RUNTIME_PARENT, isWithin, Sandbox, SandboxError, type SandboxPolicy } from 'dsh-sandbox'
import type { MountPlan } from './args'
import type { LocalSandboxConfig } from './config'
import { CONTROL_SOCKETS } from './control-sockets'
import { planCredentialMasks } from './credentials'
import { hostRuntimeCover } from './host-runtime-cover'
import { hostInstallationRoots } from './host-installation'
import { FifoPool } from './fifo-pool'
import { checkedBwrapArgv } from './launch'
import { probeBwrap } from './probe'
import { canonicalHome, homesDirectory, planPrivateHome } from './private-home'
import { planMounts } from './protected-paths'
import { filterGuard, installSeccompFilter } from './seccomp/filter-file'
import { StartGate } from './start-gate'
import { readLegacyTiocsti, type TiocstiFact } from './tiocsti'
import { errorMessage } from 'dsh-basics'

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
  private readonly memo: { probe?: Promise<HostFacts>; warnedInstallation?: boolean; gate?: StartGate } = {}

  constructor(ctx: Context, config: LocalSandboxConfig) {
    super(ctx)
    this.config = config
    this.log = ctx.logger('sandbox-local')
    ctx.effect(() => () => this.memo.gate?.dispose(), 'sandbox-local: close the unused start FIFOs')
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
    if (policy.readableFiles !== undefined) confined.readableFiles = canonicalReadableFiles(policy.readableFiles)
    const writable = policy.mode === 'workspace-write'
    const sources = { config: this.config, installationRoots: facts.installationRoots, controlSockets: this.controlSockets() }
    const hostRuntimeParent = hostRuntimeCover(workspaceRoot, confined.readableFiles ?? [], this.hostRuntimeParent())
    const plan = {
      ...(await planMounts(workspaceRoot, writable, facts.userNamespace, sources)),
      ...(hostRuntimeParent ? { hostRuntimeParent } : {}),
      ...this.homeAndMasks(workspaceRoot, writable),
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
    return checkedBwrapArgv({ bwrapPath: facts.bwrapPath, seccompFilter }, argv, confined, guarded, (check) => this.startGate().hold(check), undefined, notice)
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
      this.log.warn('sandbox unavailable, confined processes will be refused: %s', errorMessage(error))
      throw error
    }
    if (facts.legacyTiocsti.enabled) {
      const risk =
        `TIOCSTI terminal input injection is allowed by the kernel (${facts.legacyTiocsti.detail}): the sandbox's seccomp ` +
        'filter refuses it inside every sandbox, but processes outside it (and a sandbox without the filter) can still push input into their terminal'
      if (this.config.legacyTiocsti === 'refuse') {
        const error = new SandboxError(
          'SANDBOX_UNAVAILABLE',
          `${risk}; legacyTiocsti is "refuse": disable it with sysctl -w dev.tty.legacy_tiocsti=0, or set legacyTiocsti: warn`,
        )
        this.log.warn('sandbox unavailable: %s', error.message)
        throw error
      }
      // One short line: the sandbox is safe either way, so this is advice, not an alarm.
      this.log.warn('%s', tiocstiAdvice(facts.legacyTiocsti))
    }
    return facts
  }
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
