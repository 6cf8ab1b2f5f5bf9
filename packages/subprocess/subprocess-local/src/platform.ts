import { SubprocessError } from 'dsh-subprocess'
import { DarwinInspector } from './darwin/ps-inspector'
import type { ProcessInspector } from './inspector'
import { LinuxInspector } from './linux/inspector'

const inspectors = new Map<string, ProcessInspector>()

/**
 * The process inspector for a platform (one shared instance each), or `UNSUPPORTED_PLATFORM`:
 * only Linux (/proc) and macOS (ps) can report foreground groups and process trees.
 */
export function inspectorFor(platform: NodeJS.Platform): ProcessInspector {
  let inspector = inspectors.get(platform)
  if (inspector) return inspector
  if (platform === 'linux') inspector = new LinuxInspector()
  else if (platform === 'darwin') inspector = new DarwinInspector()
  else throw new SubprocessError('UNSUPPORTED_PLATFORM', `terminals are not supported on ${platform}; dsh-subprocess-local supports linux and darwin`)
  inspectors.set(platform, inspector)
  return inspector
}
