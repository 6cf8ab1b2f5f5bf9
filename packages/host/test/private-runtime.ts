import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { join } from 'node:path'
import { ensureRuntimeParent, HOST_RUNTIME_PARENT, hostRuntimeDir } from 'dsh-sandbox'

/** How long the namespace gets to come up; it takes milliseconds. */
const READY_MS = 20_000

/**
 * A private `/tmp/dsh-terminal` for one test: an empty tmpfs over the fixed host runtime parent in a
 * mount namespace of its own, kept alive by an anchor process. Hosts and `attach` run inside it
 * through {@link PrivateRuntime.wrap}, so they use the real fixed path without meeting the hosts of
 * other test files (or of people) on this machine; the test reads the same files from outside
 * through `/proc/<anchor>/root`. Needs root (mount namespaces), as every attach isolation test does.
 */
export class PrivateRuntime {
  private constructor(private readonly anchor: ChildProcessWithoutNullStreams) {}

  /** Start the anchor and wait until its tmpfs is mounted; rejects with what unshare or mount said. */
  static async start(): Promise<PrivateRuntime> {
    ensureRuntimeParent() // the mount point, on the host
    const script = 'mount -t tmpfs -o mode=1777 dsh-test-runtime "$1" && echo ready && exec cat'
    const anchor = spawn('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', script, 'sh', HOST_RUNTIME_PARENT], { stdio: ['pipe', 'pipe', 'pipe'] })
    let stderr = ''
    anchor.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the private runtime namespace did not come up in ${READY_MS} ms: ${stderr}`)), READY_MS)
      anchor.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        if (!chunk.includes('ready')) return
        clearTimeout(timer)
        resolve()
      })
      anchor.on('error', (error) => {
        clearTimeout(timer)
        reject(error)
      })
      anchor.on('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`the private runtime namespace exited (${code}) before it was ready (needs root): ${stderr}`))
      })
    })
    return new PrivateRuntime(anchor)
  }

  /** `/tmp/dsh-terminal` of the namespace, as a path outside it. */
  get parent(): string {
    return join(`/proc/${this.anchor.pid}/root`, HOST_RUNTIME_PARENT)
  }

  /** This uid's host directory of the namespace, as a path outside it (hosts in this process listen here). */
  get dir(): string {
    return hostRuntimeDir(process.getuid?.() ?? -1, this.parent)
  }

  /** This uid's host directory as processes inside the namespace name it. */
  get insideDir(): string {
    return hostRuntimeDir(process.getuid?.() ?? -1)
  }

  /** The argv that runs `argv` inside the namespace, in `cwd` (entering a mount namespace resets it). */
  wrap(argv: readonly string[], cwd: string = process.cwd()): string[] {
    return ['nsenter', `--mount=/proc/${this.anchor.pid}/ns/mnt`, `--wd=${cwd}`, '--', ...argv]
  }

  /** End the anchor; the namespace and its tmpfs go with the last process inside. */
  async close(): Promise<void> {
    if (this.anchor.exitCode !== null || this.anchor.signalCode !== null) return
    const exited = new Promise<void>((resolve) => this.anchor.once('exit', () => resolve()))
    this.anchor.stdin.end()
    await exited
  }
}
