/**
 * dsh-sandbox: the sandbox seam. A contract, not a plugin: providers such as `dsh-sandbox-local`
 * extend {@link Sandbox} and are mounted instead.
 */
export { allowedByList, type HostPattern, hostPatternProblem, isRequestableHost, normalizeName, parseHostPattern } from './allowlist'
export { SandboxError, type SandboxErrorCode } from './errors'
export {
  assertRuntimeParent,
  ensureRuntimeParent,
  HOST_RUNTIME_PARENT,
  hostRuntimeDir,
  RuntimeParentError,
  type RuntimeParentErrorCode,
} from './host-runtime'
export { isWithin } from './paths'
export { type AheadConfinement, Sandbox } from './service'
export {
  type ConfinedMode,
  defaultNetwork,
  isConfinedMode,
  isSandboxMode,
  type SandboxMode,
  SandboxModeSchema,
  type SandboxNetwork,
  SandboxNetworkSchema,
  type SandboxPolicy,
} from './types'
export { assertConfineRequest } from './validate'
