import { Context } from '@deepseek-ai/cordis'
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { SandboxPolicy } from 'dsh-sandbox'
import { Config, type HostFacts, LocalSandbox } from 'dsh-sandbox-local'
import { installSeccompFilter, KERNEL_MASKS, type KernelMask, SECCOMP_RULES, SYSCALL_NUMBERS, seccompArchitecture } from 'dsh-sandbox-local/internal'
import { bwrapUnavailable, run, scratchDir } from './helpers'
import { Terminal } from './terminal'

/**
 * The host kernel as root inside the sandbox would reach it: /proc/sys, the keyrings, new
 * namespaces, personality, terminal injection. Each attack is tried for real and must fail, while
 * ordinary work (shells, python, git, gdb, node) runs under the same seccomp filter.
 */

type Scratch = Awaited<ReturnType<typeof scratchDir>>
const isRoot = process.getuid?.() === 0
const numbers = SYSCALL_NUMBERS[seccompArchitecture()]
const has = (program: string) => ['/usr/bin', '/bin'].some((dir) => existsSync(join(dir, program)))
/** On CI every tool the tests use is installed by .ci/run: a missing one must fail there, not skip. */
const needs = (program: string) => !has(program) && !process.env.CI

let workspace: Scratch
let filters: Scratch
const root = new Context()
const withoutUserNamespace = new Context()
const open: Terminal[] = []

/** A provider that never gives the sandbox a user namespace, as on hosts that refuse one. */
class NoUserNamespaceSandbox extends LocalSandbox {
  protected override async probeHost(): Promise<HostFacts> {
    return { ...(await super.probeHost()), userNamespace: false }
  }
}

async function sh(script: string, policy: Partial<SandboxPolicy> = {}, context = root) {
  const full: SandboxPolicy = { mode: 'workspace-write', workspaceRoot: workspace.path, cwd: workspace.path, ...policy }
  return run(await context.sandbox.confine(['sh', '-c', script], full))
}

/**
 * A perl one-liner printing `$label=<result> <errno>` for one raw syscall. String arguments go in
 * variables `$a`, `$b`, `$c` (perl passes a string as a pointer, and refuses literals as read-only).
 */
function perlSyscall(label: string, call: string, strings: readonly string[] = []): string {
  const variables = strings.map((value, index) => `$${'abc'[index]} = "${value}"; `).join('')
  return `perl -e '${variables}$r = syscall(${call}); print "${label}=$r ", $! + 0, "\\n"'`
}

describe.skipIf(bwrapUnavailable !== undefined)('the host kernel is out of reach of root inside the sandbox (real bwrap)', () => {
  beforeAll(async () => {
    workspace = await scratchDir('kernel-ws', '/var/tmp')
    filters = await scratchDir('kernel-filters')
    await root.plugin(LocalSandbox, Config.parse({}))
    await withoutUserNamespace.plugin(NoUserNamespaceSandbox, Config.parse({}))
  })

  afterEach(() => {
    for (const terminal of open.splice(0)) terminal.pty.kill('SIGKILL')
  })

  afterAll(async () => {
    await workspace?.remove()
    await filters?.remove()
  })

  it.skipIf(!isRoot)("the issue's /proc/sys write fails read-only, in both modes, with and without a user namespace", async () => {
    const before = readFileSync('/proc/sys/vm/overcommit_ratio', 'utf8')
    // Writes back the value just read, and core_pattern's own value: harmless even if it got through.
    const script =
      'echo "$(cat /proc/sys/vm/overcommit_ratio)" > /proc/sys/vm/overcommit_ratio && echo WROTE-SYSCTL; ' +
      'cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern && echo WROTE-CORE-PATTERN; ' +
      'cat /proc/sys/kernel/hostname'
    for (const [context, policy] of [
      [root, { mode: 'workspace-write' }],
      [root, { mode: 'read-only' }],
      [root, { mode: 'workspace-write', network: 'none' }],
      [withoutUserNamespace, { mode: 'workspace-write' }],
    ] as const) {
      const result = await sh(script, policy, context)
      const label = `${JSON.stringify(policy)}${context === withoutUserNamespace ? ' without a user namespace' : ''}`
      expect(result.stdout, label).not.toMatch(/WROTE/)
      expect(result.stderr, label).toMatch(/overcommit_ratio: Read-only file system/)
      expect(result.stderr, label).toMatch(/core_pattern: Read-only file system/)
      // Still readable: tools that read sysctls keep working.
      expect(result.stdout.trim(), label).toBe(readFileSync('/proc/sys/kernel/hostname', 'utf8').trim())
    }
    expect(readFileSync('/proc/sys/vm/overcommit_ratio', 'utf8')).toBe(before)
  })

  it.skipIf(!isRoot)("a read-only workspace of / keeps the sandbox's own /proc: no host processes, /proc/sys read-only", async () => {
    const result = await sh('ls /proc | grep -c "^[0-9]"; echo "$(cat /proc/sys/vm/overcommit_ratio)" > /proc/sys/vm/overcommit_ratio && echo WROTE', {
      mode: 'read-only',
      workspaceRoot: '/',
      cwd: '/',
    })
    // sh, ls and grep (and bwrap's init): a handful, where the host has many more.
    expect(Number(result.stdout.split('\n')[0])).toBeLessThan(8)
    expect(result.stdout).not.toContain('WROTE')
    expect(result.stderr).toContain('Read-only file system')
  })

  it('the other kernel files are read-only or hidden: sysrq-trigger, keys, timer_list, /proc/fs, /sys/firmware', async () => {
    const result = await sh(
      [
        'echo h > /proc/sysrq-trigger && echo WROTE-SYSRQ',
        'cat /proc/keys | grep -c . ; echo "keys=$?"',
        'cat /proc/timer_list | head -c 100 | grep -c . ; echo "timers=$?"',
        'touch /proc/fs/x && echo WROTE-PROCFS',
        'ls -A /sys/firmware | wc -l',
        'touch /sys/firmware/x && echo WROTE-FIRMWARE',
      ].join('\n'),
    )
    expect(result.stdout).not.toMatch(/WROTE/)
    // Reading the masks shows nothing of the host's keys or timers (their lines would count).
    expect(result.stdout).toMatch(/^0\nkeys=1\n0\ntimers=1\n0\n$/)
    if (existsSync('/proc/sysrq-trigger')) expect(result.stderr).toMatch(/sysrq-trigger: Read-only file system/)
    // The host shows them, so the test would have seen them without the masks.
    if (isRoot) expect(readFileSync('/proc/keys', 'utf8')).toMatch(/keyring/)
  })

  it.skipIf(needs('perl'))('every unconditional rule of the filter answers its errno for a real call inside (arguments all zero)', async () => {
    // Zero arguments are harmless for each of these, and without the filter most would answer
    // EFAULT or EINVAL (or succeed): the filter's errno comes before any argument is looked at.
    const rules = SECCOMP_RULES.filter((rule) => rule.refuseWhen.kind === 'always' && numbers[rule.syscall] !== undefined)
    expect(rules.length).toBeGreaterThan(30)
    const script = rules.map((rule) => perlSyscall(rule.syscall, `${numbers[rule.syscall]}, 0, 0, 0, 0, 0, 0`)).join('; ')
    const result = await sh(script)
    expect(result.stdout).toBe(rules.map((rule) => `${rule.syscall}=-1 ${rule.errno}\n`).join(''))
  })

  it('every kernel mask holds inside by its treatment: read-only refuses writes, hidden reads nothing, emptied lists nothing', async () => {
    const present = KERNEL_MASKS.filter((mask) => existsSync(mask.path))
    const probe = (mask: KernelMask) => {
      if (mask.treatment === 'read-only') return `touch '${mask.path}/dsh-probe' 2>/dev/null && echo 'WROTE ${mask.path}'; echo ok`
      if (mask.treatment === 'hidden') return `head -c 64 '${mask.path}' 2>/dev/null | wc -c`
      return `ls -A '${mask.path}' | wc -l; touch '${mask.path}/dsh-probe' 2>/dev/null && echo 'WROTE ${mask.path}'`
    }
    const result = await sh(present.map(probe).join('\n'))
    const expected = present.map((mask) => (mask.treatment === 'read-only' ? 'ok\n' : '0\n')).join('')
    expect(result.stdout).toBe(expected)
  })

  it.skipIf(needs('perl'))('keyctl, add_key and request_key are refused with EPERM, with and without a user namespace', async () => {
    const script = [
      perlSyscall('keyctl', `${numbers.keyctl}, 0, -3, 0`),
      perlSyscall('add_key', `${numbers.add_key}, $a, $b, $c, 6, -3`, ['user', 'dsh-escape', 'secret']),
      perlSyscall('request_key', `${numbers.request_key}, $a, $b, 0, 0`, ['user', 'dsh-escape']),
    ].join('; ')
    for (const context of [root, withoutUserNamespace]) {
      const result = await sh(script, {}, context)
      expect(result.stdout).toBe('keyctl=-1 1\nadd_key=-1 1\nrequest_key=-1 1\n')
    }
    // The same keyctl call on the host answers with a keyring id: the filter is what stops it.
    const host = await run(['sh', '-c', perlSyscall('keyctl', `${numbers.keyctl}, 0, -3, 0`)])
    expect(host.stdout).toMatch(/^keyctl=\d+ /)
  })

  it.skipIf(needs('unshare'))('new namespaces are refused: unshare -U, -m, -r, -n, -p, also without a user namespace for the sandbox', async () => {
    const script = ['-U', '-m', '-r', '-n', '-pf', '-i', '-u', '-C'].map((flag) => `unshare ${flag} true 2>/dev/null && echo "ALLOWED ${flag}"`).join('; ')
    for (const context of [root, withoutUserNamespace]) {
      const result = await sh(`${script}; echo done`, {}, context)
      expect(result.stdout).toBe('done\n')
    }
    // The host itself can: the refusal comes from the sandbox.
    expect((await run(['unshare', '-U', 'true'])).code).toBe(0)
  })

  it.skipIf(needs('perl') || needs('python3'))('clone3 answers ENOSYS, so threads and processes fall back to clone and keep working', async () => {
    const result = await sh(
      [
        perlSyscall('clone3', `${numbers.clone3}, 0, 0`),
        `python3 -c "import threading, subprocess; t = threading.Thread(target=print, args=('thread',)); t.start(); t.join(); print(subprocess.run(['echo', 'child'], capture_output=True, text=True).stdout.strip())"`,
      ].join('; '),
    )
    expect(result.stdout).toBe('clone3=-1 38\nthread\nchild\n')
  })

  it.skipIf(needs('perl'))('io_uring answers ENOSYS inside, as on a kernel without it, while the host may set one up', async () => {
    // The parameters are a 120-byte struct io_uring_params, zeroed.
    const params = `perl -e '$a = "\\0" x 120; $r = syscall(${numbers.io_uring_setup}, 1, $a); print "io_uring_setup=", ($r < 0 ? "-1 " . ($! + 0) : "fd"), "\\n"'`
    expect((await sh(params)).stdout).toBe('io_uring_setup=-1 38\n')
    // Outside, the same call reaches the kernel: it answers with a ring or its own refusal, never the filter's ENOSYS.
    const host = await run(['sh', '-c', params])
    expect(host.stdout).toMatch(/^io_uring_setup=(fd|-1 (1|12|22))\n$/)
  })

  it.skipIf(needs('perl'))('personality: only the harmless values pass (no READ_IMPLIES_EXEC, no ADDR_NO_RANDOMIZE)', async () => {
    const result = await sh(
      [
        perlSyscall('read-implies-exec', `${numbers.personality}, 0x0400000`),
        perlSyscall('no-randomize', `${numbers.personality}, 0x0040000`),
        perlSyscall('query', `${numbers.personality}, 0xffffffff`),
        'setarch -R true 2>/dev/null && echo SETARCH-R',
        'setarch linux32 uname -m',
      ].join('; '),
    )
    expect(result.stdout).toMatch(/^read-implies-exec=-1 1\nno-randomize=-1 1\nquery=0 \d+\n(i686|armv[78]l|armv8l)\n$/)
  })

  it.runIf(process.arch === 'x64')('x86_64: x32 syscalls fail with ENOSYS and an i386 syscall (int 0x80) kills the process', async () => {
    const int80 = [
      'import ctypes, mmap',
      'page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)',
      // mov eax, 20 (getpid in the i386 table); int 0x80; ret
      "page.write(b'\\xb8\\x14\\x00\\x00\\x00\\xcd\\x80\\xc3')",
      'call = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))',
      "print('i386-getpid', call())",
    ].join('\n')
    await writeFile(join(workspace.path, 'int80.py'), `${int80}\n`)
    const script = `${perlSyscall('x32-getpid', `${0x40000000 | 39}`)}; python3 int80.py; echo "status=$?"`
    const result = await sh(script)
    expect(result.stdout).toBe(`x32-getpid=-1 38\nstatus=${128 + 31}\n`) // SIGSYS
    // On the host the same code runs (when the kernel has i386 emulation): the filter is what kills it.
    const host = await run(['python3', join(workspace.path, 'int80.py')])
    if (host.code === 0) expect(host.stdout).toMatch(/^i386-getpid \d+\n$/)
  })

  it.skipIf(needs('perl'))('TIOCSTI and TIOCLINUX are refused on the session terminal, also with high bits set in the request', async () => {
    const argv = await root.sandbox.confine(['bash', '--noprofile', '--norc', '-i'], {
      mode: 'workspace-write',
      workspaceRoot: workspace.path,
      cwd: workspace.path,
    })
    const terminal = new Terminal(argv, workspace.path)
    open.push(terminal)
    await terminal.ready()
    const inject = await terminal.run(`perl -e '$c = "X"; ioctl(STDIN, 0x5412, $c) or print "sti=", $! + 0, "\\n"'`)
    expect(inject.text).toMatch(/sti=1\r?\n/)
    const console = await terminal.run(`perl -e '$b = pack("C", 2); ioctl(STDIN, 0x541c, $b) or print "linux=", $! + 0, "\\n"'`)
    expect(console.text).toMatch(/linux=1\r?\n/)
    const high = await terminal.run(`perl -e '$c = "X"; $r = syscall(${numbers.ioctl}, 0, 0xffffffff00005412, $c); print "high=$r ", $! + 0, "\\n"'`)
    expect(high.text).toMatch(/high=-1 1\r?\n/)
    // Nothing was pushed into the input: unfiltered, the next line would read `Xecho after` and fail.
    const after = await terminal.run('echo after')
    expect(after.status).toBe(0)
    expect(after.text).not.toContain('Xecho')
  })

  it('the filter is loaded: Seccomp 2 with one filter more than the host process has', async () => {
    const own = Number(/^Seccomp_filters:\s*(\d+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0)
    for (const context of [root, withoutUserNamespace]) {
      const result = await sh('grep -E "^(Seccomp|Seccomp_filters|NoNewPrivs):" /proc/self/status', {}, context)
      expect(result.stdout.replace(/\t/g, ' ')).toBe(`NoNewPrivs: 1\nSeccomp: 2\nSeccomp_filters: ${own + 1}\n`)
    }
  })

  it('a writable workspace that holds the filter file cannot replace it', async () => {
    const directory = join(workspace.path, 'cache', 'dsh-sandbox')
    await mkdir(join(workspace.path, 'cache'), { recursive: true })
    const filter = await installSeccompFilter(directory)
    class FilterInWorkspace extends LocalSandbox {
      protected override async probeHost(): Promise<HostFacts> {
        return { ...(await super.probeHost()), seccompFilter: filter }
      }
    }
    const context = new Context()
    await context.plugin(FilterInWorkspace, Config.parse({}))
    const original = await readFile(filter)
    const attack = `printf x > '${filter}'; mv '${workspace.path}/cache' '${workspace.path}/moved' && echo MOVED; echo ok > '${workspace.path}/free'`
    const result = await sh(attack, {}, context)
    expect(result.stdout).not.toContain('MOVED')
    expect(await readFile(filter)).toEqual(original)
    expect(await readFile(join(workspace.path, 'free'), 'utf8')).toBe('ok\n')
  })

  describe('ordinary work runs under the filter', () => {
    it('bash, python3, node (with worker threads and a child process)', async () => {
      const node = `node -e "const { Worker } = require('worker_threads'); new Worker('require(\\"worker_threads\\").parentPort.postMessage(6 * 7)', { eval: true }).on('message', (m) => console.log('worker', m, require('child_process').execFileSync('echo', ['child']).toString().trim()))"`
      const result = await sh(`bash -c 'echo "bash $((6 * 7))"'; python3 -c 'print("python", 6 * 7)'; ${node}`)
      expect(result.stderr).toBe('')
      expect(result.stdout).toBe('bash 42\npython 42\nworker 42 child\n')
    })

    it.skipIf(needs('git'))('git init, add and commit', async () => {
      const repo = join(workspace.path, 'repo')
      const identity = '-c user.name=Agent -c user.email=agent@example.invalid'
      const result = await sh(
        `git init -q '${repo}' && cd '${repo}' && echo a > a.txt && git add a.txt && git ${identity} commit -qm first && git log --format=%s`,
      )
      expect(result.stdout).toBe('first\n')
    })

    it.skipIf(needs('gdb'))('gdb runs a program and attaches to a running child (ptrace stays allowed)', async () => {
      const ran = await sh('gdb -q -batch -ex run --args /bin/true 2>&1')
      expect(ran.stdout).toMatch(/exited normally/)
      const attached = await sh('sleep 30 & pid=$!; gdb -q -batch -p "$pid" -ex "info inferiors" 2>&1; kill "$pid"')
      expect(attached.stdout).toMatch(/\* 1\s+process \d+\s+.*\/sleep/)
      expect(attached.stdout).not.toMatch(/ptrace: Operation not permitted/)
    })
  })
})
