import { realpathSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { hostPatternProblem, SandboxModeSchema, SandboxNetworkSchema } from 'dsh-sandbox'
import { z } from 'zod'

/** Canonicalise a workspace root: resolved against the process cwd, realpath, must be a directory. */
function canonicalWorkspaceRoot(value: string, context: z.core.$RefinementCtx<string>): string {
  const requested = resolve(value)
  try {
    const real = realpathSync(requested)
    if (statSync(real).isDirectory()) return real
    context.addIssue({ code: 'custom', message: `workspaceRoot ${requested} is not a directory` })
  } catch {
    context.addIssue({ code: 'custom', message: `workspaceRoot ${requested} does not exist` })
  }
  return z.NEVER
}

/** `dsh-sandbox-policy` configuration; every field is optional. */
export const Config = z
  .object({
    /** The deployment's default mode, used for every owner without a session mode. */
    mode: SandboxModeSchema.default('workspace-write'),
    /** The workspace root; relative paths resolve against the process cwd. Canonicalised, must exist. */
    workspaceRoot: z
      .string()
      .min(1, 'workspaceRoot must not be empty')
      .default(() => process.cwd())
      .transform(canonicalWorkspaceRoot),
    /**
     * Network reach of confined processes: `none` (only loopback), `host`, or `allowlist` (no network
     * but the host's proxy to `allowedHosts`). Unset keeps each mode's default: `read-only` none,
     * `workspace-write` host. Set `none` to cut egress in workspace-write too.
     */
    network: SandboxNetworkSchema.optional(),
    /**
     * Where the `allowlist` network connects: host names, `*.domain` wildcards (subdomains only) or
     * IP addresses, each optionally with `:port`. Everything else is refused, with a line naming it.
     */
    allowedHosts: z
      .array(
        z.string().superRefine((entry, context) => {
          const problem = hostPatternProblem(entry)
          if (problem !== undefined) context.addIssue({ code: 'custom', message: problem })
        }),
      )
      .default([]),
  })
  .prefault({})

/** The validated configuration: `workspaceRoot` is canonical. */
export type SandboxPolicyConfig = z.output<typeof Config>
