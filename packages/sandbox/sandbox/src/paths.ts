import { isAbsolute, relative, sep } from 'node:path'

/**
 * True when canonical `path` is `root` or lies beneath it (both absolute and canonical). Shared by
 * every layer that decides whether a path is inside a workspace, so they can never disagree.
 */
export function isWithin(root: string, path: string): boolean {
  const rel = relative(root, path)
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
}
