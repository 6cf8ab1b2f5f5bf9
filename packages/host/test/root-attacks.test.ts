import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { eventually, installed, isAlive, processesRunning } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DANGER_CONFIG, DEFAULT_CONFIG, READ_ONLY_CONFIG } from './helpers'
import { PrivateRuntime } from './private-runtime'
import { AttackedHost, addUserKey, KEYCTL, NUMBERS, perlReadKey, perlSyscall, removeUserKey } from './root-attacks-harness'

/**
 * Root inside a session of a real headless host (default composition and read-only overlay) tries
 * what issue 24 found open, through terminal_open/terminal_send as a model would: host sysctls,
 * the host's keyring, new user namespaces, credentials in the environment, a `.git/modules` link
 * out of the workspace, a daemon that outlives a SIGKILLed unconfined host, and a concurrent
 * session swapping the pinned `.git` for a link while another session opens. A danger-full-access
 * host runs the same scripts as the positive control: there each attack works, so each test can
 * fail. Markers are echoed as `WROTE""-X` so the echoed command line never matches `WROTE-X`.
 */

/** Three tsx hosts start at once on a loaded two-core machine. */
const STARTUP_MS = 120_000
/** Session opens tried against a concurrent swap: without a fix, one in four to eight escaped by hand. */
const RACE_ATTEMPTS = 60
/** A test's few calls on hosts already started (sessions start a sandbox each). */
const CALL_MS = 60_000
const isRoot = process.getuid?.() === 0
/** On CI every program is installed: a missing one must fail there, never skip. */
const lacks = (program: string) => !installed(program) && !process.env.CI

/** Every credential value carries this fragment; the sessions count it in `env`. */
const SECRET_FRAGMENT = 'rootattack'
/** The credentials of issue 24, under names that say nothing where only the value shape can tell. */
const CREDENTIALS: Record<string, string> = {
  MYSQL_PWD: `mysql-${SECRET_FRAGMENT}-1`,
  CI_JOB_JWT: `cijob-${SECRET_FRAGMENT}-2`,
  LDAP_BIND_PW: `ldap-${SECRET_FRAGMENT}-3`,
  STRIPE_SK: `sk_live_${SECRET_FRAGMENT}4`,
  KUBECONFIG: `/root/.kube/${SECRET_FRAGMENT}-5`,
  REPO_REMOTE: `https://ghp_${SECRET_FRAGMENT}0123456789abcdefghijklmn@github.com/owner/repo.git`,
  NOTIFY_URL: `https://hooks.slack.com/services/T00000000/B00000000/${SECRET_FRAGMENT}7`,
  EXTRA_HEADER: `Authorization: Bearer ${SECRET_FRAGMENT}8`,
  REPORT_URL: `https://db.example.com/report?user=ci&password=${SECRET_FRAGMENT}9`,
}
/** An ordinary variable every session must still see: the scrub is not "drop everything". */
const CANARY = { ROOT_ATTACK_CANARY: 'canary-visible' }

const COMPOSITIONS = [
  ['the default composition', 'default'],
  ['the read-only overlay', 'readOnly'],
] as const
type Confined = (typeof COMPOSITIONS)[number][1]

let runtime: PrivateRuntime
let scratch: string
const hosts = {} as Record<Confined | 'control', AttackedHost>
const keyDescription = `dsh-root-attack-${process.pid}`
const keyPayload = `payload-${process.pid}-${Date.now()}`
let keyId: number | undefined

/** The sysctl write-back of issue 24: the same value goes back, so even a success changes nothing. */
const SYSCTL_WRITE_BACK = [
  'v=$(cat /proc/sys/vm/overcommit_ratio); echo "$v" > /proc/sys/vm/overcommit_ratio && echo WROTE""-OVERCOMMIT',
  'p=$(cat /proc/sys/kernel/core_pattern); printf "%s\\n" "$p" > /proc/sys/kernel/core_pattern && echo WROTE""-CORE-PATTERN',
].join('\n')

/** Read the host's key: /proc/keys, keyctl(1) when present, KEYCTL_SEARCH and KEYCTL_READ by raw syscall. */
function keyringScript(): string {
  // The description is assembled in the shell, so the echoed command line never contains it.
  const [prefix, suffix] = [keyDescription.slice(0, 9), keyDescription.slice(9)]
  return [
    `export d=${prefix}; d="\${d}${suffix}"`,
    'echo "proc-keys=$(grep -c "$d" /proc/keys 2>&1)"',
    '{ command -v keyctl >/dev/null && keyctl show @u; } 2>&1',
    perlSyscall('search', `${NUMBERS.keyctl}, ${KEYCTL.SEARCH}, ${KEYCTL.USER_KEYRING}, $a, $b, 0`, ['user', '$ENV{d}']),
    perlReadKey(keyId!),
  ].join('\n')
}

/** New user namespaces three ways: unshare -U, unshare -r, and unshare(CLONE_NEWUSER) by raw syscall. */
const USER_NAMESPACE_SCRIPT = [
  'unshare -U true && echo ALLOWED""-U',
  'unshare -r id -u && echo ALLOWED""-R',
  perlSyscall('newuser', `${NUMBERS.unshare}, 0x10000000`),
].join('\n')

/** Count the credential fragment in the session's environment, and show the canary. */
const ENV_SCRIPT = `echo "secrets=$(env | grep -c "root""attack")"; echo "canary=$ROOT_ATTACK_CANARY"`

describe.skipIf(process.platform !== 'linux' || !isRoot)('root inside a sandboxed session of a real host (issue 24)', () => {
  beforeAll(async () => {
    runtime = await PrivateRuntime.start()
    scratch = mkdtempSync('/var/tmp/dsh-root-attacks-')
    const workspace = (name: string) => {
      const path = join(scratch, name)
      mkdirSync(path)
      return path
    }
    const env = { ...CREDENTIALS, ...CANARY }
    hosts.control = AttackedHost.launch(runtime, DANGER_CONFIG, workspace('control'), env)
    hosts.default = AttackedHost.launch(runtime, DEFAULT_CONFIG, workspace('default'), env)
    hosts.readOnly = AttackedHost.launch(runtime, READ_ONLY_CONFIG, workspace('read-only'), env)
    if (!lacks('perl')) keyId = addUserKey(keyDescription, keyPayload)
    // The first open of each host waits for its start (and the sandbox probe).
    await Promise.all(Object.values(hosts).map((host) => host.shell('true')))
  }, STARTUP_MS)

  afterAll(async () => {
    if (keyId !== undefined) removeUserKey(keyId)
    await Promise.all(Object.values(hosts).map((host) => host.close()))
    await runtime?.close()
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true })
  })

  it(
    'control: in an unconfined session the same scripts write sysctls, read the key and make user namespaces',
    async () => {
      const before = readFileSync('/proc/sys/vm/overcommit_ratio', 'utf8')
      const sysctl = await hosts.control.shell(SYSCTL_WRITE_BACK)
      expect(sysctl).toContain('WROTE-OVERCOMMIT')
      expect(sysctl).toContain('WROTE-CORE-PATTERN')
      expect(readFileSync('/proc/sys/vm/overcommit_ratio', 'utf8')).toBe(before)
      if (keyId !== undefined) {
        const keys = await hosts.control.shell(keyringScript())
        expect(keys).toContain(`search=${keyId} `)
        expect(keys).toContain(`read=${keyPayload}`)
      }
      const namespaces = await hosts.control.shell(USER_NAMESPACE_SCRIPT)
      expect(namespaces).toContain('ALLOWED-U')
      expect(namespaces).toMatch(/newuser=0 /)
    },
    CALL_MS,
  )

  it.each(COMPOSITIONS)(
    "%s: the host's sysctls are read-only (overcommit_ratio, core_pattern written back)",
    async (_, which) => {
      const before = readFileSync('/proc/sys/vm/overcommit_ratio', 'utf8')
      const output = await hosts[which].shell(SYSCTL_WRITE_BACK)
      expect(output).not.toMatch(/WROTE-/)
      expect(output).toMatch(/overcommit_ratio: Read-only file system/)
      expect(output).toMatch(/core_pattern: Read-only file system/)
      expect(readFileSync('/proc/sys/vm/overcommit_ratio', 'utf8')).toBe(before)
    },
    CALL_MS,
  )

  it.skipIf(lacks('perl')).each(COMPOSITIONS)(
    "%s: a key the host's uid added to its user keyring cannot be listed, found or read",
    async (_, which) => {
      const output = await hosts[which].shell(keyringScript())
      // /proc/keys is /dev/null on a nodev mount: empty or refused, never the host's list.
      expect(output).toMatch(/proc-keys=(0|grep: \/proc\/keys: Permission denied)\n/)
      expect(output).toContain('search=-1 1\n')
      expect(output).toContain('read=-1 1\n')
      expect(output).not.toContain(keyDescription)
      expect(output).not.toContain(keyPayload)
    },
    CALL_MS,
  )

  it.skipIf(lacks('perl') || lacks('unshare')).each(COMPOSITIONS)(
    '%s: no new user namespace (unshare -U, unshare -r, raw unshare)',
    async (_, which) => {
      const output = await hosts[which].shell(USER_NAMESPACE_SCRIPT)
      expect(output).not.toMatch(/ALLOWED-/)
      expect(output).toContain('newuser=-1 1\n')
    },
    CALL_MS,
  )

  it.each([...COMPOSITIONS, ['the danger-full-access overlay', 'control'] as const])(
    "%s: the host's credentials never reach the session's environment, ordinary variables do",
    async (_, which) => {
      const output = await hosts[which].shell(ENV_SCRIPT)
      expect(output).toContain('secrets=0\n')
      expect(output).toContain(`canary=${CANARY.ROOT_ATTACK_CANARY}\n`)
      for (const value of Object.values(CREDENTIALS)) expect(output).not.toContain(value)
    },
    CALL_MS,
  )

  it(
    'the default composition: .git/modules planted as a link out of the workspace (and to /) creates nothing there; later opens work',
    async () => {
      const workspace = join(scratch, 'modules-ws')
      const outside = join(scratch, 'modules-outside')
      // A git directory where submodule git directories would be: the old search protected it, creating hooks/ there.
      mkdirSync(join(outside, 'victim'), { recursive: true })
      writeFileSync(join(outside, 'victim', 'HEAD'), 'ref: refs/heads/main\n')
      mkdirSync(join(workspace, '.git'), { recursive: true })
      writeFileSync(join(workspace, '.git', 'HEAD'), 'ref: refs/heads/main\n')
      const host = AttackedHost.launch(runtime, DEFAULT_CONFIG, workspace)
      try {
        expect(existsSync('/hooks')).toBe(false)
        const planted = await host.shell(`ln -s ${outside} .git/modules && echo PLANTED""-OUTSIDE`)
        expect(planted).toContain('PLANTED-OUTSIDE')
        for (let open = 0; open < 2; open++) expect(await host.shell('echo OPEN""-WORKS')).toContain('OPEN-WORKS')
        expect(readdirSync(join(outside, 'victim'))).toEqual(['HEAD'])
        const replanted = await host.shell('rm .git/modules && ln -s / .git/modules && echo PLANTED""-ROOT')
        expect(replanted).toContain('PLANTED-ROOT')
        for (let open = 0; open < 2; open++) expect(await host.shell('echo OPEN""-WORKS')).toContain('OPEN-WORKS')
        expect(existsSync('/hooks')).toBe(false)
      } finally {
        await host.close()
      }
    },
    STARTUP_MS,
  )

  it.skipIf(lacks('setsid') || lacks('nohup'))(
    'danger-full-access: SIGKILL of the host leaves no nohup or setsid process behind',
    async () => {
      const host = AttackedHost.launch(runtime, DANGER_CONFIG, join(scratch, 'control'))
      const sleeps = { nohup: ['sleep', `${4000 + (process.pid % 1000)}.1`], setsid: ['sleep', `${4000 + (process.pid % 1000)}.2`] }
      // The session stays open: closing it would end its processes before the host dies.
      const sessionId = await host.session()
      const output = await host.send(
        sessionId,
        `nohup ${sleeps.nohup.join(' ')} >/dev/null 2>&1 & setsid -f ${sleeps.setsid.join(' ')} </dev/null >/dev/null 2>&1; echo STARTED""-DAEMONS`,
      )
      expect(output).toContain('STARTED-DAEMONS')
      const daemons = await eventually(() => {
        const pids = [...processesRunning(sleeps.nohup), ...processesRunning(sleeps.setsid)]
        return pids.length === 2 && pids
      }, 'both daemons to run')
      const hostPid = host.hostPid()
      expect(hostPid).toBeDefined()
      process.kill(hostPid!, 'SIGKILL')
      await host.close()
      await eventually(() => daemons.every((pid) => !isAlive(pid)), 'the daemons of the SIGKILLed host to be gone', 20_000)
    },
    STARTUP_MS,
  )

  it.skipIf(lacks('python3')).each([
    [
      'the pinned .git, swapped for a link to a directory outside, never makes that directory writable',
      '.git',
      (workspace: string) => relative(workspace, join(scratch, 'race-outside')),
      'touch "$OUTSIDE/escaped" && echo ESCAPED""-RACE',
    ],
    [
      "a nested repository's hooks, swapped for a link to /tmp, never show the host's /tmp (every attach socket)",
      'sub/.git/hooks',
      (workspace: string) => relative(join(workspace, 'sub/.git'), '/tmp'),
      'test -e /tmp/dsh-terminal && echo ESCAPED""-RACE',
    ],
  ] as const)(
    'the default composition, a concurrent session racing the next open: %s',
    async (_, entry, target, probe) => {
      const workspace = join(scratch, `race-${entry.replaceAll('/', '-')}`)
      // A `hooks` directory outside, so that bwrap's bind of .git/hooks succeeds whichever way the swap stands.
      const outside = join(scratch, 'race-outside')
      mkdirSync(workspace)
      mkdirSync(join(outside, 'hooks'), { recursive: true })
      const host = AttackedHost.launch(runtime, DEFAULT_CONFIG, workspace)
      try {
        // Opened before the entry exists: in this session it is no mount point, so it can be renamed.
        const swapper = await host.session()
        // RENAME_EXCHANGE of a real directory and a relative link, in a loop: the host checks one, bwrap may bind the other.
        const swap = [
          'import ctypes, os',
          `entry = ${JSON.stringify(entry)}`,
          `os.makedirs(entry); os.symlink(${JSON.stringify(target(workspace))}, entry + '-link')`,
          'libc = ctypes.CDLL(None)',
          'number = {"x86_64": 316, "aarch64": 276}[os.uname().machine]',
          "while True: libc.syscall(number, -100, entry.encode(), -100, (entry + '-link').encode(), 2)",
        ].join('\n')
        writeFileSync(join(workspace, 'swap.py'), `${swap}\n`)
        await host.send(swapper, 'python3 swap.py & sleep 1; echo SWAPPING""-STARTED')
        const results: string[] = []
        for (let attempt = 0; attempt < RACE_ATTEMPTS; attempt++) {
          const { sessionId, text } = await host.open()
          if (sessionId === undefined) {
            results.push(`open refused: ${text.split('\n')[0]}`)
            continue
          }
          const output = await host.send(sessionId, `OUTSIDE=${outside}; ${probe}`)
          await host.answer('terminal_close', { sessionId })
          results.push(output.includes('ESCAPED-RACE') ? `attempt ${attempt}: escaped` : 'held')
          if (output.includes('ESCAPED-RACE')) break
        }
        await host.answer('terminal_close', { sessionId: swapper })
        expect(results.filter((result) => result.includes('escaped'))).toEqual([])
        expect(readdirSync(outside)).toEqual(['hooks'])
      } finally {
        await host.close()
      }
    },
    600_000,
  )
})
