import { dirname } from 'node:path'
import type { CgroupFiles } from './files'
import type { MountedHierarchy } from './mounts'

/** The cgroup controllers that enforce session limits: task count and memory. */
export type LimitController = 'pids' | 'memory'

/** The limit controllers, in the order reasons and files are listed. */
export const LIMIT_CONTROLLERS: readonly LimitController[] = ['pids', 'memory']

/** One hierarchy the runtime creates session cgroups in, and the limit controllers they get there. */
export interface LimitHierarchy {
  /** cgroup version of the hierarchy (it decides the names of the limit files). */
  readonly version: 1 | 2
  /** Existing directory under which the runtime's own parent cgroup is created. */
  readonly base: string
  /** The limit controllers a session cgroup in this hierarchy carries. */
  readonly controllers: readonly LimitController[]
}

/** Where each limit controller can be used on this host, or why it cannot. */
export interface LimitPlacement {
  /** Hierarchies to create session cgroups in (one per distinct base). */
  readonly hierarchies: readonly LimitHierarchy[]
  /** For each controller without a hierarchy: why (a sentence a person or model can act on). */
  readonly unavailable: ReadonlyMap<LimitController, string>
}

/**
 * Decide, per limit controller, which hierarchy enforces it. A v1 mount of the controller wins
 * (sessions nest under the host's own cgroup there). Otherwise cgroup v2: the controller must be
 * offered to the host's cgroup and already enabled in `cgroup.subtree_control` of the directory the
 * sessions nest under — the host's cgroup if that is allowed (the root), else its parent, because a
 * cgroup holding processes (the host's own) cannot enable controllers for children. Nothing outside
 * the runtime's own directories is written.
 */
export function placeLimits(hierarchies: readonly MountedHierarchy[], files: CgroupFiles): LimitPlacement {
  const chosen = new Map<string, { version: 1 | 2; base: string; controllers: LimitController[] }>()
  const unavailable = new Map<LimitController, string>()
  const unified = hierarchies.find((hierarchy) => hierarchy.version === 2)
  for (const controller of LIMIT_CONTROLLERS) {
    const legacy = hierarchies.find((hierarchy) => hierarchy.version === 1 && hierarchy.controllers.includes(controller))
    const place = legacy ? placeV1(legacy, controller, files) : unified ? placeV2(unified, controller, files) : { reason: 'no cgroup filesystem is mounted' }
    if ('reason' in place) {
      unavailable.set(controller, place.reason)
      continue
    }
    const entry = chosen.get(place.base) ?? { version: place.version, base: place.base, controllers: [] }
    entry.controllers.push(controller)
    chosen.set(place.base, entry)
  }
  return { hierarchies: [...chosen.values()], unavailable }
}

type Place = { version: 1 | 2; base: string } | { reason: string }

function placeV1(hierarchy: MountedHierarchy, controller: LimitController, files: CgroupFiles): Place {
  const { ownDir, mountPoint } = hierarchy
  if (ownDir === undefined || !files.exists(`${ownDir}/cgroup.procs`)) {
    return { reason: `the cgroup v1 ${controller} hierarchy at ${mountPoint} does not show the host's own cgroup` }
  }
  return { version: 1, base: ownDir }
}

function placeV2(hierarchy: MountedHierarchy, controller: LimitController, files: CgroupFiles): Place {
  const { ownDir, mountPoint } = hierarchy
  if (ownDir === undefined) return { reason: `no cgroup v1 ${controller} mount, and the cgroup v2 mount at ${mountPoint} does not show the host's own cgroup` }
  const offered = words(files.read(`${ownDir}/cgroup.controllers`))
  if (!offered.includes(controller)) {
    return {
      reason: `no cgroup v1 ${controller} mount, and cgroup v2 does not offer ${controller} to the host's cgroup ${ownDir} (cgroup.controllers: "${offered.join(' ')}")`,
    }
  }
  const candidates = ownDir === mountPoint ? [ownDir] : [ownDir, dirname(ownDir)]
  const base = candidates.find((dir) => words(files.read(`${dir}/cgroup.subtree_control`)).includes(controller))
  if (base !== undefined) return { version: 2, base }
  return {
    reason:
      `cgroup v2 offers ${controller} to the host's cgroup ${ownDir}, but neither it nor its parent enables it in cgroup.subtree_control ` +
      "(a cgroup that holds processes, like the host's, cannot enable controllers for children); " +
      'start the host in a cgroup whose parent enables pids and memory in cgroup.subtree_control and is writable by the host',
  }
}

function words(text: string | undefined): string[] {
  return (text ?? '').split(/\s+/).filter((word) => word !== '')
}
