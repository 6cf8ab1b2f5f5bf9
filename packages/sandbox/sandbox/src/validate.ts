import { isAbsolute } from 'node:path'
import { SandboxError } from './errors'
import { hostPatternProblem } from './allowlist'
import { isSandboxMode, SANDBOX_NETWORKS, type SandboxPolicy } from './types'

/**
 * The shape checks every provider applies before confining, so all providers reject the same
 * requests with the same codes. Host-specific checks (does the root exist?) stay in the provider.
 */
export function assertConfineRequest(argv: readonly string[], policy: SandboxPolicy): void {
  if (!Array.isArray(argv) || argv.length === 0) {
    throw new SandboxError('EMPTY_ARGV', 'cannot confine an empty argv: name the program to run')
  }
  argv.forEach((arg: unknown, index) => {
    if (typeof arg !== 'string' || arg.includes('\0')) {
      throw new SandboxError('INVALID_ARGV', `argv[${index}] must be a string without NUL bytes`)
    }
  })
  if (argv[0] === '') throw new SandboxError('EMPTY_ARGV', 'cannot confine an argv whose program name is empty')
  if (typeof policy !== 'object' || policy === null) {
    throw new SandboxError('INVALID_POLICY', 'a sandbox policy object is required')
  }
  const mode: unknown = policy.mode
  if (mode === 'danger-full-access') {
    throw new SandboxError('INVALID_POLICY', 'danger-full-access is unconfined and must not reach a sandbox provider: start the process directly')
  }
  if (!isSandboxMode(mode)) {
    throw new SandboxError('INVALID_POLICY', `unknown sandbox mode ${JSON.stringify(mode)}; expected read-only or workspace-write`)
  }
  assertAbsolute('workspaceRoot', policy.workspaceRoot)
  if (policy.cwd !== undefined) assertAbsolute('cwd', policy.cwd)
  const network: unknown = policy.network
  if (network !== undefined && !(SANDBOX_NETWORKS as readonly unknown[]).includes(network)) {
    throw new SandboxError('INVALID_POLICY', `unknown sandbox network ${JSON.stringify(network)}; expected none, host or allowlist`)
  }
  const allowed: unknown = policy.allowedHosts
  if (allowed !== undefined) {
    if (!Array.isArray(allowed)) throw new SandboxError('INVALID_POLICY', 'sandbox policy allowedHosts must be a list of host names or patterns')
    for (const entry of allowed) {
      const problem = hostPatternProblem(entry)
      if (problem !== undefined) throw new SandboxError('INVALID_POLICY', problem)
    }
  }
  const readable: unknown = policy.readableFiles
  if (readable !== undefined) {
    if (!Array.isArray(readable)) throw new SandboxError('INVALID_POLICY', 'sandbox policy readableFiles must be a list of absolute paths')
    readable.forEach((path: unknown, index) => {
      assertAbsolute(`readableFiles[${index}]`, path)
    })
  }
}

function assertAbsolute(field: string, value: unknown): void {
  if (typeof value !== 'string' || value.includes('\0') || !isAbsolute(value)) {
    throw new SandboxError('INVALID_POLICY', `sandbox policy ${field} must be an absolute path, got ${JSON.stringify(value)}`)
  }
}
