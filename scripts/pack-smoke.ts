/**
 * `pnpm pack:smoke` (CI runs it after `pnpm build`): prove the packages work outside the workspace.
 * Packs every public package with `pnpm pack`, checks each tarball (no `workspace:` range, every
 * exports/main/types/bin target inside it, the licence, an executable bin, no test kit), installs
 * the tarballs with plain npm into a fresh project (install scripts off: node-pty must load its
 * prebuild), then drives the installed command: MCP through the official SDK client on the shipped
 * default composition, a headless round trip on a cordis.yml naming the packages, a shipped preset,
 * and the published types. Exits 1 on the first mismatch; the temporary folder is always removed
 * (PACK_SMOKE_KEEP=1 keeps it for a look).
 */
import { type SpawnOptions, spawn } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadWorkspace, repositoryRoot } from './docs/workspace'

/** What a packed package.json may hold that these checks read. */
interface Manifest {
  name: string
  version: string
  private?: boolean
  license?: string
  engines?: Record<string, string>
  repository?: { url?: string; directory?: string }
  main?: string
  types?: string
  bin?: Record<string, string>
  exports?: unknown
  files?: string[]
  dependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  devDependencies?: Record<string, string>
}

/** One packed public package. */
interface Packed {
  readonly name: string
  readonly dir: string
  readonly tarball: string
  readonly manifest: Manifest
}

/** The package with the command, and the tools its default composition must list. */
const COMMAND_PACKAGE = 'dsh-terminal-mcp'
const COMMAND_BINS = ['dsh-terminal-mcp', 'dsh-terminal']
const DEFAULT_TOOLS = [
  'job_kill',
  'job_list',
  'job_output',
  'terminal_close',
  'terminal_list',
  'terminal_open',
  'terminal_read',
  'terminal_send',
  'terminal_signal',
]
const TEST_KIT = 'dsh-testkit'
const RUNTIME_FIELDS = ['dependencies', 'peerDependencies', 'optionalDependencies'] as const
/** No single step may take longer; a hang fails instead of stalling CI. */
const STEP_TIMEOUT_MS = 120_000

const root = repositoryRoot()
const started = Date.now()
const timings: [string, number][] = []

/** A failure this script found (printed without a stack). */
class SmokeFailure extends Error {}

function fail(message: string): never {
  throw new SmokeFailure(message)
}

/** Run one step, print it with its duration, and remember the duration under `key` for the summary. */
async function timed<T>(key: string, label: string, run: () => Promise<T> | T): Promise<T> {
  const t0 = Date.now()
  const value = await run()
  timings.push([key, Date.now() - t0])
  process.stdout.write(`  ✓ ${label} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`)
  return value
}

/** The environment of a user's shell: none of the npm_/pnpm_ settings `pnpm run` exports. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(npm_|pnpm_)/i.test(key)))
}

/** Run a command to completion; resolves with its output, fails with both streams on a non-zero exit. */
function run(command: string, args: readonly string[], options: SpawnOptions & { input?: string } = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: cleanEnv(), ...options, stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), STEP_TIMEOUT_MS)
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const line = [command, ...args].join(' ')
      if (code === 0) resolve({ stdout, stderr })
      else
        reject(
          new SmokeFailure(
            `\`${line}\` ended with ${code ?? signal}${signal === 'SIGKILL' ? ` (killed after ${STEP_TIMEOUT_MS / 1000} s)` : ''}\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`,
          ),
        )
    })
    if (options.input !== undefined) {
      // A child that exits before reading its input breaks the pipe: its exit code and output
      // (reported on close) say what went wrong, so the write error itself adds nothing.
      child.stdin!.on('error', () => {})
      child.stdin!.end(options.input)
    }
  })
}

/** Every file path (without the leading `package/`) and its mode, from `tar -tvzf`. */
async function tarballEntries(tarball: string): Promise<Map<string, string>> {
  const { stdout } = await run('tar', ['-tvzf', tarball])
  const entries = new Map<string, string>()
  for (const line of stdout.split('\n').filter(Boolean)) {
    const path = line.slice(line.indexOf(' package/') + 1)
    if (!path.startsWith('package/')) fail(`${tarball}: unexpected entry ${line}`)
    entries.set(path.slice('package/'.length), line.split(/\s+/)[0]!)
  }
  return entries
}

/** Every string an `exports` value can resolve to, with the condition path that leads there. */
function exportTargets(value: unknown, path = 'exports'): [string, string][] {
  if (typeof value === 'string') return [[path, value]]
  if (value === null || typeof value !== 'object') return []
  return Object.entries(value).flatMap(([key, inner]) => exportTargets(inner, `${path}[${JSON.stringify(key)}]`))
}

/** The rules every tarball must meet; returns one message per broken rule. */
function checkTarball(packed: Packed, entries: Map<string, string>, publicNames: ReadonlySet<string>): string[] {
  const { manifest, name } = packed
  const problems: string[] = []
  const text = JSON.stringify(manifest)
  if (text.includes('workspace:')) problems.push('a workspace: range is left in package.json')
  const has = (target: string) => entries.has(target.replace(/^\.\//, ''))
  const targets: [string, string][] = [...exportTargets(manifest.exports)]
  if (manifest.main) targets.push(['main', manifest.main])
  if (manifest.types) targets.push(['types', manifest.types])
  for (const [bin, target] of Object.entries(manifest.bin ?? {})) targets.push([`bin.${bin}`, target])
  for (const [where, target] of targets) if (!has(target)) problems.push(`${where} names ${target}, which is not in the tarball`)
  if (manifest.exports && typeof manifest.exports === 'object' && JSON.stringify(manifest.exports).includes('"source"')) {
    problems.push('exports still use the common "source" condition')
  }
  if (!has('dist/index.js') || !has('dist/index.d.ts')) problems.push('dist/index.js or dist/index.d.ts is missing')
  if (!has('LICENSE')) problems.push('LICENSE is missing')
  else if (!readFileSync(join(root, 'LICENSE'), 'utf8').startsWith('MIT License')) problems.push('the root LICENSE is not the MIT licence')
  if (manifest.license !== 'MIT') problems.push(`license is ${JSON.stringify(manifest.license)}, expected "MIT"`)
  if (!manifest.engines?.node) problems.push('engines.node is missing')
  if (!manifest.repository?.url || !manifest.repository.directory) problems.push('repository.url or repository.directory is missing')
  // A plugin package shares the host's Cordis: a peer, never a dependency of its own. A package of
  // plain functions (dsh-basics) names none; one that imports Cordis without it fails the import step.
  if (manifest.dependencies?.['@deepseek-ai/cordis']) problems.push('@deepseek-ai/cordis is a dependency; it must be a peer dependency')
  for (const field of RUNTIME_FIELDS) {
    for (const [dep, range] of Object.entries(manifest[field] ?? {})) {
      if (dep === TEST_KIT) problems.push(`${field} names the private ${TEST_KIT}`)
      if (publicNames.has(dep) && range !== `^${manifest.version}`) problems.push(`${field}.${dep} is ${range}, expected ^${manifest.version}`)
    }
  }
  for (const target of Object.values(manifest.bin ?? {})) {
    const mode = entries.get(target.replace(/^\.\//, ''))
    if (mode && !/^-rwx/.test(mode)) problems.push(`bin ${target} is not executable in the tarball (${mode})`)
  }
  if (name === COMMAND_PACKAGE) {
    for (const bin of COMMAND_BINS) if (!manifest.bin?.[bin]) problems.push(`bin ${bin} is missing`)
    for (const file of ['dist/compositions/cordis.yml', 'dist/compositions/examples/danger-full-access.yml', 'dist/compositions/examples/read-only.yml']) {
      if (!has(file)) problems.push(`${file} (the shipped compositions) is missing`)
    }
  }
  if ([...entries.keys()].some((path) => path.includes('testkit'))) problems.push('a testkit file is in the tarball')
  return problems.map((problem) => `${packed.tarball.split('/').pop()}: ${problem}`)
}

/** One headless run of an installed bin: every line answered, none an error. */
async function headless(
  project: string,
  bin: string,
  args: string[],
  requests: object[],
): Promise<{ isError: boolean; text: string; meta?: Record<string, unknown> }[]> {
  const input = requests.map((request) => `${JSON.stringify(request)}\n`).join('')
  const { stdout, stderr } = await run(join(project, 'node_modules/.bin', bin), ['headless', ...args], { cwd: project, input })
  const lines = stdout.trimEnd().split('\n')
  if (lines.length !== requests.length) fail(`${bin} headless ${args.join(' ')}: ${lines.length} lines for ${requests.length} requests\n${stdout}\n${stderr}`)
  return lines.map((line, index) => {
    let parsed: { id?: unknown; isError?: boolean; text?: string; meta?: Record<string, unknown> }
    try {
      parsed = JSON.parse(line) as typeof parsed
    } catch {
      fail(`${bin} headless: line ${index + 1} is not JSON: ${line}`)
    }
    if (parsed.id !== index + 1 || parsed.isError !== false) fail(`${bin} headless ${args.join(' ')}: request ${index + 1} answered ${line}\n${stderr}`)
    return { isError: false, text: String(parsed.text), ...(parsed.meta ? { meta: parsed.meta } : {}) }
  })
}

/** A cordis.yml as a user would write it next to an installed copy: rows name the packages. */
const USER_COMPOSITION = `# Written by pack-smoke: the family by package name, sessions read-only.
- { id: agents, name: dsh-agent }
- { id: tools, name: dsh-tools }
- { id: jobs, name: dsh-jobs }
- { id: job-tools, name: dsh-tool-jobs }
- { id: subprocess, name: dsh-subprocess-local }
- { id: sandbox, name: dsh-sandbox-local }
- id: sandbox-policy
  name: dsh-sandbox-policy
  config: { mode: read-only, workspaceRoot: . }
- { id: terminals, name: dsh-terminal }
- { id: bash, name: dsh-terminal-bash }
- { id: terminal-tools, name: dsh-tool-terminal }
`

async function main(): Promise<void> {
  const temp = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-pack-smoke-')))
  const tarballs = join(temp, 'tarballs')
  const project = join(temp, 'project')
  mkdirSync(tarballs)
  mkdirSync(project)
  const remove = () => {
    if (process.env.PACK_SMOKE_KEEP) process.stdout.write(`pack-smoke: kept ${temp} (PACK_SMOKE_KEEP)\n`)
    else rmSync(temp, { recursive: true, force: true })
  }
  // Interrupted (Ctrl-C, a CI timeout): remove the folder too; children get the signal themselves.
  const interrupted = (signal: NodeJS.Signals) => {
    remove()
    process.stderr.write(`pack-smoke: interrupted by ${signal}\n`)
    process.exit(130)
  }
  process.once('SIGINT', interrupted)
  process.once('SIGTERM', interrupted)
  try {
    const workspace = loadWorkspace(root).map((pkg) => ({
      ...pkg,
      manifest: JSON.parse(readFileSync(join(root, pkg.dir, 'package.json'), 'utf8')) as Manifest,
    }))
    const testKit = workspace.find((pkg) => pkg.name === TEST_KIT)
    if (!testKit?.manifest.private) fail(`${TEST_KIT} must be "private": true`)
    const publics = workspace.filter((pkg) => !pkg.manifest.private)
    const publicNames = new Set(publics.map((pkg) => pkg.name))
    for (const pkg of publics) if (!existsSync(join(root, pkg.dir, 'dist/index.js'))) fail(`${pkg.dir}/dist is missing: run \`pnpm build\` first`)

    const packed = await timed('pack', `pnpm pack: ${publics.length} public packages`, async () => {
      const result: Packed[] = []
      for (const pkg of publics) {
        const before = new Set(readdirSync(tarballs))
        await run('pnpm', ['pack', '--pack-destination', tarballs], { cwd: join(root, pkg.dir), env: process.env })
        const made = readdirSync(tarballs).filter((file) => !before.has(file))
        if (made.length !== 1 || !made[0]!.endsWith('.tgz')) fail(`pnpm pack in ${pkg.dir} made ${made.join(', ') || 'nothing'}`)
        const tarball = join(tarballs, made[0]!)
        const { stdout } = await run('tar', ['-xzOf', tarball, 'package/package.json'])
        result.push({ name: pkg.name, dir: pkg.dir, tarball, manifest: JSON.parse(stdout) as Manifest })
      }
      return result
    })

    await timed('tarball checks', 'tarballs: ranges, exports targets, LICENSE, bins, no test kit', async () => {
      const problems: string[] = []
      for (const pkg of packed) {
        if (pkg.manifest.name !== pkg.name) problems.push(`${pkg.tarball}: packed name ${pkg.manifest.name}`)
        problems.push(...checkTarball(pkg, await tarballEntries(pkg.tarball), publicNames))
      }
      if (readdirSync(tarballs).some((file) => file.includes('testkit'))) problems.push(`${TEST_KIT} was packed`)
      if (!packed.some((pkg) => pkg.name === COMMAND_PACKAGE)) problems.push(`${COMMAND_PACKAGE} was not packed`)
      if (problems.length) fail(`tarball checks failed:\n  ${problems.join('\n  ')}`)
    })

    await timed('npm install', 'npm install of the tarballs into an empty project (install scripts off)', async () => {
      writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'dsh-pack-smoke', version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`)
      await run('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', ...packed.map((pkg) => pkg.tarball)], { cwd: project })
      if (existsSync(join(project, 'node_modules', TEST_KIT))) fail(`${TEST_KIT} was installed`)
      for (const pkg of packed) {
        const installed = JSON.parse(readFileSync(join(project, 'node_modules', pkg.name, 'package.json'), 'utf8')) as Manifest
        if (installed.version !== pkg.manifest.version) fail(`node_modules/${pkg.name} is ${installed.version}, not the packed ${pkg.manifest.version}`)
      }
      for (const bin of COMMAND_BINS) {
        const link = join(project, 'node_modules/.bin', bin)
        if (!existsSync(link) || (statSync(link).mode & 0o111) === 0) fail(`node_modules/.bin/${bin} is missing or not executable`)
      }
      await run('npm', ['ls', '--all', '--omit=dev'], { cwd: project })
    })

    await timed('imports+types', 'every package imports in plain Node, and its types resolve through exports', async () => {
      const names = packed.map((pkg) => pkg.name)
      const script = names.map((name) => `await import(${JSON.stringify(name)})`).join('\n')
      await run(process.execPath, ['--input-type=module', '-e', script], { cwd: project })
      writeFileSync(join(project, 'types.ts'), names.map((name, index) => `import * as m${index} from '${name}'\nvoid m${index}\n`).join(''))
      writeFileSync(
        join(project, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, skipLibCheck: true, types: [] },
          files: ['types.ts'],
        }),
      )
      await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(project, 'tsconfig.json')], { cwd: project })
    })

    await timed('help', '--help names both ways to pick a composition', async () => {
      const { stdout } = await run(join(project, 'node_modules/.bin', COMMAND_PACKAGE), ['--help'], { cwd: project })
      for (const needle of ['--config', '--preset', 'danger-full-access', 'dsh-terminal-mcp'])
        if (!stdout.includes(needle)) fail(`--help lacks ${needle}:\n${stdout}`)
    })

    await timed('mcp', 'MCP over stdio with the SDK client: default composition, initialize, tools/list, open, send echo, close', async () => {
      copyFileSync(join(root, 'scripts/pack-smoke/mcp-client.mjs'), join(project, 'mcp-client.mjs'))
      const version = packed.find((pkg) => pkg.name === COMMAND_PACKAGE)!.manifest.version
      const bin = join(project, 'node_modules/.bin', COMMAND_PACKAGE)
      await run(process.execPath, ['mcp-client.mjs', bin, version, DEFAULT_TOOLS.join(',')], { cwd: project })
    })

    await timed('headless', 'headless JSON lines on a cordis.yml naming the packages (dsh-terminal bin)', async () => {
      writeFileSync(join(project, 'my.yml'), USER_COMPOSITION)
      const [opened, sent, refused] = await headless(
        project,
        'dsh-terminal',
        ['--config', 'my.yml'],
        [
          { id: 1, tool: 'terminal_open', arguments: { type: 'shell' } },
          { id: 2, tool: 'terminal_send', arguments: { sessionId: 'pty-1', text: 'echo "headless-$((6 * 7))"' } },
          { id: 3, tool: 'terminal_send', arguments: { sessionId: 'pty-1', text: 'touch written-in-read-only 2>/dev/null; echo "touch=$?"' } },
          { id: 4, tool: 'terminal_close', arguments: { sessionId: 'pty-1' } },
        ],
      )
      if (!opened!.text.startsWith('started terminal session pty-1 [type: shell]')) fail(`terminal_open: ${opened!.text}`)
      if (!sent!.text.includes('\nheadless-42\n') || !sent!.text.includes('[exit: 0]')) fail(`terminal_send: ${sent!.text}`)
      if (!refused!.text.includes('\ntouch=1\n') || existsSync(join(project, 'written-in-read-only'))) fail(`read-only was not enforced: ${refused!.text}`)
    })

    await timed('preset', 'the shipped danger-full-access preset (no bubblewrap needed)', async () => {
      const [opened, sent] = await headless(
        project,
        COMMAND_PACKAGE,
        ['--preset', 'danger-full-access'],
        [
          { id: 1, tool: 'terminal_open', arguments: { type: 'shell' } },
          { id: 2, tool: 'terminal_send', arguments: { sessionId: 'pty-1', text: 'echo "preset-$((6 * 7))"' } },
        ],
      )
      if (!opened!.text.startsWith('started terminal session pty-1')) fail(`terminal_open: ${opened!.text}`)
      if (!sent!.text.includes('\npreset-42\n')) fail(`terminal_send: ${sent!.text}`)
    })
  } finally {
    process.off('SIGINT', interrupted)
    process.off('SIGTERM', interrupted)
    remove()
  }
}

try {
  await main()
  const total = ((Date.now() - started) / 1000).toFixed(1)
  process.stdout.write(`pack-smoke: passed in ${total} s (${timings.map(([key, ms]) => `${key} ${(ms / 1000).toFixed(1)} s`).join(', ')})\n`)
} catch (error) {
  process.stderr.write(
    `pack-smoke: FAILED\n${error instanceof SmokeFailure ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  )
  process.exitCode = 1
}
