import { dirname } from 'node:path'
import type { CgroupFiles } from '../src/internal'

/**
 * An in-memory directory tree standing in for cgroupfs, for layouts this host does not have.
 * `fail` makes the next operations on matching paths throw a system error with that code.
 */
export class FakeCgroupFiles implements CgroupFiles {
  readonly dirs = new Set<string>(['/'])
  readonly contents = new Map<string, string>()
  /** Rules: an operation on a path containing `path` throws `code`. */
  readonly failures: { operation: 'mkdir' | 'write' | 'rmdir'; path: string; code: string }[] = []

  /** Create directories (with parents) and files from a path → content map; a `/` suffix is a directory. */
  constructor(tree: Record<string, string> = {}) {
    for (const [path, content] of Object.entries(tree)) {
      if (path.endsWith('/')) this.#ensure(path.slice(0, -1))
      else {
        this.#ensure(dirname(path))
        this.contents.set(path, content)
      }
    }
  }

  read(path: string): string | undefined {
    return this.contents.get(path)
  }

  write(path: string, text: string): void {
    this.#maybeFail('write', path)
    if (!this.dirs.has(dirname(path))) throw systemError('ENOENT', path)
    this.contents.set(path, text)
  }

  mkdir(path: string): void {
    this.#maybeFail('mkdir', path)
    if (!this.dirs.has(dirname(path))) throw systemError('ENOENT', path)
    this.dirs.add(path)
  }

  rmdir(path: string): void {
    this.#maybeFail('rmdir', path)
    if (!this.dirs.has(path)) throw systemError('ENOENT', path)
    if (this.subdirectories(path).length > 0) throw systemError('EBUSY', path)
    this.dirs.delete(path)
    for (const file of [...this.contents.keys()]) if (dirname(file) === path) this.contents.delete(file)
  }

  subdirectories(path: string): string[] {
    return [...this.dirs].filter((dir) => dir !== path && dirname(dir) === path).map((dir) => dir.slice(path.length + 1))
  }

  exists(path: string): boolean {
    return this.dirs.has(path) || this.contents.has(path)
  }

  #ensure(path: string): void {
    for (let dir = path; !this.dirs.has(dir); dir = dirname(dir)) this.dirs.add(dir)
  }

  #maybeFail(operation: 'mkdir' | 'write' | 'rmdir', path: string): void {
    const rule = this.failures.find((candidate) => candidate.operation === operation && path.includes(candidate.path))
    if (rule) throw systemError(rule.code, path)
  }
}

function systemError(code: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: fake cgroupfs, ${path}`), { code })
}

/** One mountinfo line for a cgroup mount (`version` 1 names its controllers in the super options). */
export function mountLine(mountPoint: string, version: 1 | 2, controllers: readonly string[] = [], root = '/'): string {
  const fsType = version === 2 ? 'cgroup2 cgroup2 rw' : `cgroup cgroup rw,${controllers.join(',')}`
  return `40 30 0:37 ${root} ${mountPoint} rw,relatime - ${fsType}`
}

/** This machine's kind of layout: v1 pids at the root, v1 memory nested, an empty v2 hierarchy. */
export const HYBRID = {
  mountInfo: [
    '30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
    mountLine('/sys/fs/cgroup/memory', 1, ['memory']),
    mountLine('/sys/fs/cgroup/pids', 1, ['pids']),
    mountLine('/sys/fs/cgroup/cpu', 1, ['cpu']),
    mountLine('/sys/fs/cgroup/systemd', 1, ['name=systemd']),
    mountLine('/sys/fs/cgroup/unified', 2),
  ].join('\n'),
  selfCgroup: ['9:name=systemd:/', '8:pids:/', '4:memory:/jobs/42', '1:cpu:/', '0::/'].join('\n'),
}
