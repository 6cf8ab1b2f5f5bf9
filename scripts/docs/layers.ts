import { RUNTIME_KINDS, type WorkspacePackage } from './workspace'

/** One layer of the house: mechanism at the bottom, policy and presentation above. */
export interface Layer {
  /** Short id used in messages and the generated table. */
  readonly id: string
  /** What the layer owns, one line (shown in docs/architecture.md). */
  readonly role: string
  /**
   * Providers of a seam: other packages reach them only through the seam, so only the host layer
   * and other providers may name them at runtime (tests may, through devDependencies). A provider
   * names another when it is built from it: the session host mounts dsh-subprocess-local, and
   * dsh-subprocess-remote speaks the session host's protocol and starts its bin.
   */
  readonly provider?: boolean
  /**
   * Test-only helpers, never published: other packages may name them only in devDependencies, so
   * nothing a consumer installs can reach them.
   */
  readonly testOnly?: boolean
  /** Package names in this layer. */
  readonly packages: readonly string[]
}

/**
 * The layer of every workspace package, lowest first. This table is the one place layers are
 * defined: `pnpm docs:check` fails for a package missing here and for a dependency that points to
 * a higher layer; docs/architecture.md renders it.
 */
export const LAYERS: readonly Layer[] = [
  {
    id: 'testkit',
    role: 'test-only helpers shared by tests and benches (devDependencies only): /proc readers, polling until a condition holds',
    testOnly: true,
    packages: ['dsh-testkit'],
  },
  {
    id: 'basics',
    role: 'plain functions every package shares: UTF-8 cutting, error messages, abort and timeout races',
    packages: ['dsh-basics'],
  },
  {
    id: 'seams',
    role: 'contracts and shared registries: owners, tools, jobs, the subprocess and sandbox seams, the sandbox policy',
    packages: ['dsh-agent', 'dsh-tools', 'dsh-jobs', 'dsh-subprocess', 'dsh-sandbox', 'dsh-sandbox-policy'],
  },
  {
    id: 'provider',
    role: 'mechanism behind a seam: node-pty, /proc and ps inspectors, process-tree teardown, bubblewrap, the session host and its wire',
    provider: true,
    packages: ['dsh-subprocess-local', 'dsh-sandbox-local', 'dsh-session-host', 'dsh-subprocess-remote'],
  },
  {
    id: 'registry',
    role: 'ctx.terminals: owners, ids, the send reservation, awaited cleanup',
    packages: ['dsh-terminal'],
  },
  {
    id: 'backend',
    role: 'one session type: readiness, sanitizer, scrollback, sandbox resolution; beside it, what reads its output (the recorder)',
    packages: ['dsh-terminal-bash', 'dsh-terminal-snapshot', 'dsh-terminal-recorder'],
  },
  {
    id: 'consumer',
    role: 'model-facing tools: result texts, byte caps, background sends, guidance',
    packages: ['dsh-tool-terminal', 'dsh-tool-jobs'],
  },
  {
    id: 'host',
    role: 'compositions and protocols: cordis.yml loader, MCP server, headless JSON lines, ACP projection',
    packages: ['dsh-terminal-mcp'],
  },
]

/** Index of a package's layer in {@link LAYERS} (0 = lowest), or undefined when it has none. */
export function layerIndex(name: string): number | undefined {
  const index = LAYERS.findIndex((layer) => layer.packages.includes(name))
  return index < 0 ? undefined : index
}

/**
 * The rules of the house that package.json files can break. Returns one message per violation:
 * a package without a layer (or a layer entry without a package), a dependency on a higher layer,
 * a runtime dependency on a provider from a layer other than the host's and the providers' own, a runtime dependency on a test-only
 * package, and a runtime dependency cycle.
 */
export function checkLayers(packages: readonly WorkspacePackage[]): string[] {
  const failures: string[] = []
  const names = new Set(packages.map((pkg) => pkg.name))
  for (const pkg of packages) {
    if (layerIndex(pkg.name) === undefined) {
      failures.push(`${pkg.dir}/package.json: ${pkg.name} has no layer; add it to LAYERS in scripts/docs/layers.ts`)
    }
  }
  for (const layer of LAYERS) {
    for (const name of layer.packages) {
      if (!names.has(name)) failures.push(`scripts/docs/layers.ts: layer ${layer.id} lists ${name}, which is not a workspace package`)
    }
  }
  const hostIndex = LAYERS.length - 1
  for (const pkg of packages) {
    const own = layerIndex(pkg.name)
    if (own === undefined) continue
    for (const dep of pkg.dependencies) {
      const target = layerIndex(dep.name)
      if (target === undefined) continue
      const where = `${pkg.dir}/package.json ${dep.kind}`
      if (target > own) {
        failures.push(`${where}: ${pkg.name} (layer ${LAYERS[own]!.id}) depends on ${dep.name} (layer ${LAYERS[target]!.id}); nothing depends upward`)
      } else if (LAYERS[target]!.provider && RUNTIME_KINDS.includes(dep.kind) && own !== hostIndex && !LAYERS[own]!.provider && pkg.name !== dep.name) {
        failures.push(`${where}: ${pkg.name} depends on the provider ${dep.name}; use its seam and let the host mount the provider`)
      } else if (LAYERS[target]!.testOnly && RUNTIME_KINDS.includes(dep.kind) && pkg.name !== dep.name) {
        failures.push(`${where}: ${pkg.name} depends on the test-only ${dep.name}; name it in devDependencies`)
      }
    }
  }
  const cycle = findCycle(packages)
  if (cycle) failures.push(`runtime dependency cycle: ${cycle.join(' -> ')}`)
  return failures
}

/** One runtime dependency cycle (first found in name order), or undefined. */
function findCycle(packages: readonly WorkspacePackage[]): string[] | undefined {
  const edges = new Map(packages.map((pkg) => [pkg.name, pkg.dependencies.filter((dep) => RUNTIME_KINDS.includes(dep.kind)).map((dep) => dep.name)]))
  const state = new Map<string, 'open' | 'done'>()
  const path: string[] = []
  const visit = (name: string): string[] | undefined => {
    if (state.get(name) === 'done') return undefined
    if (state.get(name) === 'open') return [...path.slice(path.indexOf(name)), name]
    state.set(name, 'open')
    path.push(name)
    for (const next of edges.get(name) ?? []) {
      const found = visit(next)
      if (found) return found
    }
    path.pop()
    state.set(name, 'done')
    return undefined
  }
  for (const pkg of packages) {
    const found = visit(pkg.name)
    if (found) return found
  }
  return undefined
}
