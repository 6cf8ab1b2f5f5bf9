import { defaultNetwork, isWithin, type SandboxPolicy } from 'dsh-sandbox'
import { EGRESS_DIRECTORY } from './egress/in-sandbox'
import { kernelMaskOptions } from './proc-masks'

/**
 * Host-dependent parts of the bwrap command line, decided outside the pure argv builder: whether
 * the host can give the sandbox a user namespace, and which paths get mounts of their own.
 */
export interface MountPlan {
  /** Start in a new user namespace (`--unshare-user`): its capability bounding set is empty. */
  readonly userNamespace: boolean
  /**
   * Paths under the writable workspace that stay read-only inside, because a write there would run
   * code outside the sandbox later (git hooks and config, the host's own installation).
   */
  readonly readOnly: readonly string[]
  /**
   * Paths bound onto themselves with their surroundings' access, only to become mount points: a
   * mount point cannot be renamed or replaced, so e.g. `.git` cannot be swapped for a forged one.
   */
  readonly pinned: readonly string[]
  /** Host sockets hidden behind `/dev/null` (privileged control sockets that would undo the sandbox). */
  readonly hidden: readonly string[]
  /** Directories of the user's sessions (`$XDG_RUNTIME_DIR`, a `$TMPDIR` other than /tmp) replaced by an empty tmpfs. */
  readonly privateDirs: readonly string[]
  /**
   * Where every dsh-terminal host keeps its attach socket and token (`/tmp/dsh-terminal`), when the
   * workspace shows it again: covered with an empty tmpfs after every other mount (see hostRuntimeCover).
   */
  readonly hostRuntimeParent?: string
  /** The session's own writable `$HOME` with the user's harmless dotfiles (see `planPrivateHome`); absent: the host's home shows. */
  readonly home?: PrivateHome
  /** Credentials hidden inside (see `planCredentialMasks`): `~/.ssh`, `/etc/shadow`, `/root`, … */
  readonly masks?: readonly CredentialMask[]
  /** Paths a user opened on purpose (`readablePaths`), bound read-only after every mask. */
  readonly opened?: readonly ReadOnlyBind[]
  /** The `allowlist` network's proxy: its host directory, bound read-only at `EGRESS_DIRECTORY`, and the perl its forwarder runs. */
  readonly egress?: EgressPlan
}

/** What an `allowlist` sandbox is given to reach its proxy (see egress/in-sandbox). */
export interface EgressPlan {
  /** The proxy's host directory (its socket and the connect helper). */
  readonly directory: string
  /** The perl that runs the in-sandbox forwarder. */
  readonly perl: string
}

/** A host path shown read-only at `destination` inside: a dotfile in the private home, an opened credential. */
export interface ReadOnlyBind {
  /** Canonical host path (bwrap reads it from the host's tree, never through the private home). */
  readonly source: string
  /** Where the sandbox sees it. */
  readonly destination: string
}

/**
 * The session's `$HOME`: a host directory kept per workspace and mode, bound at the home's path, so
 * nothing written there reaches the user's real home.
 */
export interface PrivateHome {
  /** The canonical home path, where the sandbox sees its private home. */
  readonly path: string
  /** The private directory bound there read-write. */
  readonly source: string
  /** The user's dotfiles, bound read-only over the private home. */
  readonly files: readonly ReadOnlyBind[]
}

/** A credential the sandbox must not read: an empty tmpfs over a directory, `/dev/null` over a file. */
export interface CredentialMask {
  /** Canonical path of what is hidden. */
  readonly path: string
  /** A directory gets an empty tmpfs; anything else `/dev/null`. */
  readonly directory: boolean
}

/** A plan with no host-specific mounts and no user namespace: the minimum every sandbox gets. */
export const EMPTY_MOUNT_PLAN: MountPlan = { userNamespace: false, readOnly: [], pinned: [], hidden: [], privateDirs: [] }

/**
 * The bubblewrap options (everything before `--`) for a policy whose paths were already validated.
 * Mount order matters: later mounts cover earlier ones, so the workspace is bound after `/tmp`, and
 * the protected paths after the workspace, parents before children.
 */
export function bwrapOptions(policy: SandboxPolicy, plan: MountPlan = EMPTY_MOUNT_PLAN): string[] {
  const options = [
    // The sandbox ends with the process that spawned bwrap, so a crashed host leaves nothing behind.
    '--die-with-parent',
  ]
  // A user namespace of its own: the bounding set is empty, so not even a file-capability or
  // setuid program can regain a privilege inside (bwrap also sets no_new_privs). --disable-userns
  // keeps the sandbox from making more (the seccomp filter refuses them too, with or without this).
  if (plan.userNamespace) options.push('--unshare-user', '--disable-userns')
  options.push(
    // Own pid namespace: a daemonised descendant cannot outlive the sandbox's init, and `kill -1`
    // cannot reach host processes. The host still sees every member under bwrap's pid.
    '--unshare-pid',
    // No capability at all, also when the host runs as root: without this, bwrap run by real root
    // keeps CAP_SYS_ADMIN and the sandbox can remount `/` read-write.
    '--cap-drop',
    'ALL',
    // The whole host filesystem, read-only and without device nodes.
    '--ro-bind',
    '/',
    '/',
    // A minimal /dev (null, zero, urandom, tty, a private devpts and /dev/shm); /dev/console is the
    // caller's terminal, so `tty` and job control keep working.
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    // Read-only /proc/sys and friends, kernel files hidden: uid 0 inside may be the host's root.
    ...kernelMaskOptions(),
    // A private, empty /tmp that disappears with the sandbox.
    '--tmpfs',
    '/tmp',
  )
  // Masks, then the private home and its dotfiles: a mask holding the home or the workspace (`/root`
  // when the host is root but $HOME lies elsewhere) comes first, so they show through it.
  const workspaceBound = policy.mode === 'workspace-write' || policy.workspaceRoot !== '/'
  const strictlyWithin = (outer: string, inner: string) => outer !== inner && isWithin(outer, inner)
  const masks = plan.masks ?? []
  const early = (mask: CredentialMask) =>
    (plan.home !== undefined && strictlyWithin(mask.path, plan.home.path)) || (workspaceBound && strictlyWithin(mask.path, policy.workspaceRoot))
  const late = (mask: CredentialMask) => !early(mask) && workspaceBound && isWithin(policy.workspaceRoot, mask.path)
  options.push(...maskOptions(masks.filter(early)))
  if (plan.home !== undefined) options.push(...homeOptions(plan.home))
  // Before the workspace and readable files, after the dotfiles: a credential inside a dotfile directory stays hidden.
  options.push(...maskOptions(masks.filter((mask) => !early(mask) && !late(mask))))
  // The user's runtime and temporary directories, private and empty too: their sockets trust any
  // process of the uid (see privateRuntimeDirs). Before the readable files and the workspace, which win.
  // One inside a bound workspace is covered only after that bind (a tmpfs hidden beneath the bind
  // would do nothing but let the mount check mistake it for the cover).
  // (A workspace of / is never bound again, see below: its private directories are covered here.)
  const coveredAfterWorkspace = (path: string) => policy.workspaceRoot !== '/' && path !== policy.workspaceRoot && isWithin(policy.workspaceRoot, path)
  for (const path of plan.privateDirs) if (!coveredAfterWorkspace(path)) options.push('--tmpfs', path)
  // Files the command must read although /tmp hid them; bound before the sockets are hidden, so
  // hiding always wins, and before the workspace, which covers any of them that lie inside it.
  for (const path of policy.readableFiles ?? []) options.push('--ro-bind', path, path)
  // Only a loopback interface; also the host's abstract Unix sockets become unreachable. The
  // allowlist network reaches out only through its proxy's socket, bound read-only (connect(2)
  // works through it); without a planned proxy it has no way out at all.
  const network = policy.network ?? defaultNetwork(policy.mode)
  if (network !== 'host') options.push('--unshare-net')
  if (network === 'allowlist' && plan.egress !== undefined) options.push('--ro-bind', plan.egress.directory, EGRESS_DIRECTORY)
  // Bound after /tmp so a workspace under /tmp stays visible; read-write only in workspace-write.
  const writable = policy.mode === 'workspace-write'
  // A read-only workspace of / is the root bound above: binding the host's / again (recursively)
  // would bring back its /proc, /dev and /tmp over the sandbox's own.
  if (writable || policy.workspaceRoot !== '/') options.push(writable ? '--bind' : '--ro-bind', policy.workspaceRoot, policy.workspaceRoot)
  if (writable) options.push(...protectedMounts(plan))
  // The workspace bind shows the host's tree again: a private directory inside it (a $TMPDIR under
  // the project) is covered once more, so its sockets stay out of reach there too.
  for (const path of plan.privateDirs) if (coveredAfterWorkspace(path)) options.push('--tmpfs', path)
  // A credential inside the workspace (a workspace holding the home) is hidden after the workspace
  // bind; what the user opened on purpose comes back after every mask.
  options.push(...maskOptions(masks.filter(late)))
  for (const bind of plan.opened ?? []) options.push('--ro-bind', bind.source, bind.destination)
  // A read-only mount does not stop connect(2) on a socket file, so control sockets are covered,
  // after the workspace: a workspace holding one (e.g. /run) would otherwise show it again.
  for (const path of plan.hidden) options.push('--ro-bind', '/dev/null', path)
  // Last, so that no bind (workspace, protected path) can show another host's attach socket again.
  if (plan.hostRuntimeParent !== undefined) options.push('--tmpfs', plan.hostRuntimeParent)
  if (policy.cwd !== undefined) options.push('--chdir', policy.cwd)
  return options
}

/** The private home's directory, then each dotfile read-only over it. */
function homeOptions(home: PrivateHome): string[] {
  return ['--bind', home.source, home.path, ...home.files.flatMap((file) => ['--ro-bind', file.source, file.destination])]
}

/** An empty tmpfs over each masked directory, `/dev/null` over anything else. */
function maskOptions(masks: readonly CredentialMask[]): string[] {
  return masks.flatMap((mask) => (mask.directory ? ['--tmpfs', mask.path] : ['--ro-bind', '/dev/null', mask.path]))
}

/**
 * Mounts for the pinned and read-only paths inside a writable workspace, parents first. A pin
 * inside a read-only path stays read-only: pinning must never make anything writable again.
 */
function protectedMounts(plan: MountPlan): string[] {
  const entries = [
    ...plan.readOnly.map((path) => ({ path, readOnly: true })),
    ...plan.pinned.filter((path) => !plan.readOnly.some((parent) => isWithin(parent, path))).map((path) => ({ path, readOnly: false })),
  ]
  entries.sort((a, b) => depth(a.path) - depth(b.path))
  return entries.flatMap(({ path, readOnly }) => [readOnly ? '--ro-bind' : '--bind', path, path])
}

function depth(path: string): number {
  return path.split('/').filter((part) => part !== '').length
}

/** One mount bwrap makes, as the options ask for it: `source` is absent for a tmpfs, proc or dev. */
export interface BwrapMount {
  readonly option: string
  readonly source?: string
  readonly destination: string
  /** A read-only bind (`--ro-bind`, `--ro-bind-try`). */
  readonly readOnly: boolean
}

interface OptionShape {
  readonly arguments: number
  readonly mount?: 'bind' | 'fresh'
  readonly readOnly?: boolean
}

/** How many arguments each bwrap option takes, and whether it makes a mount (and from a source). */
const OPTION_SHAPES: ReadonlyMap<string, OptionShape> = new Map<string, OptionShape>([
  ['--die-with-parent', { arguments: 0 }],
  ['--unshare-user', { arguments: 0 }],
  ['--disable-userns', { arguments: 0 }],
  ['--unshare-pid', { arguments: 0 }],
  ['--unshare-net', { arguments: 0 }],
  ['--cap-drop', { arguments: 1 }],
  ['--chdir', { arguments: 1 }],
  ['--remount-ro', { arguments: 1 }],
  ['--bind', { arguments: 2, mount: 'bind' }],
  ['--ro-bind', { arguments: 2, mount: 'bind', readOnly: true }],
  ['--ro-bind-try', { arguments: 2, mount: 'bind', readOnly: true }],
  ['--dev', { arguments: 1, mount: 'fresh' }],
  ['--proc', { arguments: 1, mount: 'fresh' }],
  ['--tmpfs', { arguments: 1, mount: 'fresh' }],
])

/**
 * The mounts a list of bwrap options (from {@link bwrapOptions}) asks for, in order: what the
 * in-sandbox mount check derives its expectations from. An option it does not know throws, so a
 * new mount kind cannot slip past the check unnoticed.
 */
export function emittedMounts(options: readonly string[]): BwrapMount[] {
  const mounts: BwrapMount[] = []
  for (let index = 0; index < options.length; ) {
    const option = options[index]!
    const shape = OPTION_SHAPES.get(option)
    if (shape === undefined) throw new Error(`emittedMounts: unknown bwrap option ${option}`)
    const values = options.slice(index + 1, index + 1 + shape.arguments)
    if (shape.mount === 'bind') mounts.push({ option, source: values[0]!, destination: values[1]!, readOnly: shape.readOnly === true })
    if (shape.mount === 'fresh') mounts.push({ option, destination: values[0]!, readOnly: false })
    index += 1 + shape.arguments
  }
  return mounts
}
