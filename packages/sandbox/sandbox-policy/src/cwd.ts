import { realpath, stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import { isWithin } from 'dsh-sandbox'
import { SandboxPolicyError } from './errors'
import type { ResolvedSandboxPolicy } from './types'

export { isWithin }

/**
 * The canonical working directory for a process started under `policy`: the workspace root by
 * default, a relative `cwd` resolves against it, and under a confined mode it must stay inside it.
 */
export async function resolveSandboxCwd(policy: ResolvedSandboxPolicy, cwd?: string): Promise<string> {
  const requested = cwd === undefined || cwd === '' ? policy.workspaceRoot : resolve(policy.workspaceRoot, cwd)
  let real: string
  let directory: boolean
  try {
    // stat follows the same links realpath resolves: one round of file-system calls, not two.
    const [canonical, info] = await Promise.all([realpath(requested), stat(requested)])
    real = canonical
    directory = info.isDirectory()
  } catch (error) {
    throw new SandboxPolicyError('INVALID_CWD', `working directory ${requested} does not exist`, { cause: error })
  }
  if (!directory) {
    throw new SandboxPolicyError('INVALID_CWD', `working directory ${requested} is not a directory`)
  }
  if (policy.mode !== 'danger-full-access' && !isWithin(policy.workspaceRoot, real)) {
    throw new SandboxPolicyError(
      'CWD_OUTSIDE_WORKSPACE',
      `working directory ${real} is outside the workspace ${policy.workspaceRoot} and the sandbox mode is ${policy.mode}`,
    )
  }
  return real
}
