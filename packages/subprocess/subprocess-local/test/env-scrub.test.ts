import { Context } from '@deepseek-ai/cordis'
import { afterEach, describe, expect, it } from 'vitest'
import * as local from 'dsh-subprocess-local'
import { capture, mountRuntime } from './helpers'

/** Parent variables a terminal must not inherit: credential names and a password in a URL value. */
const LEAKS: Record<string, string> = {
  DATABASE_URL: 'postgres://u:leak-db@host/db',
  GH_PAT: 'leak-pat',
  SSH_AUTH_SOCK: '/tmp/leak-agent.sock',
  NPM_CONFIG__AUTH: 'leak-npm',
  SENTRY_DSN: 'https://leak-dsn@o1.ingest.sentry.io/1',
  MY_PASS: 'leak-pass',
  http_proxy: 'http://u:leak-proxy@proxy:3128',
  MYSQL_PWD: 'leak-mysql',
  CI_JOB_JWT: 'leak-jwt',
  LDAP_BIND_PW: 'leak-ldap',
  STRIPE_SK: 'leak-stripe',
  KUBECONFIG: '/tmp/leak-kubeconfig',
  REPORT_URL: 'https://reports.example/upload?password=leak-query',
  GIT_REMOTE: 'https://ghp_leakleakleak@github.com/org/repo.git',
  ALERTS: 'https://hooks.slack.com/services/T0/B0/leak-slack',
  CURL_HEADERS: 'Authorization: Bearer leak-bearer-token',
}

/** Parent variables that must arrive: a look-alike, a URL without password, and the allow-listed one. */
const KEPT: Record<string, string> = {
  GIT_AUTHOR_NAME: 'kept-author',
  HOMEPAGE_URL: 'https://kept-user@example.org/',
  HF_AUTH: 'allowed-hf',
  OLDPWD: '/tmp/kept-oldpwd',
  AWS_PROFILE: 'kept-profile',
}

let mounted: Awaited<ReturnType<typeof mountRuntime>> | undefined

afterEach(async () => {
  await mounted?.close()
  mounted = undefined
  for (const name of [...Object.keys(LEAKS), ...Object.keys(KEPT)]) delete process.env[name]
})

describe('environment scrub in a real child', () => {
  it('shows none of the parent credentials in `env`, but the look-alikes and the allow-listed name', async () => {
    Object.assign(process.env, LEAKS, KEPT)
    mounted = await mountRuntime({ envAllow: ['HF_AUTH'] })
    const handle = await mounted.spawn({ argv: ['env'] })
    const out = capture(handle)
    expect(await handle.done).toEqual({ exitCode: 0, signal: null })
    const lines = out.text().split(/\r?\n/)
    for (const [name, value] of Object.entries(KEPT)) expect(lines).toContain(`${name}=${value}`)
    for (const name of Object.keys(LEAKS))
      expect(
        lines.some((line) => line.startsWith(`${name}=`)),
        name,
      ).toBe(false)
    expect(out.text()).not.toMatch(/leak-/)
  })
})

describe('envAllow config', () => {
  it('defaults to nothing and accepts exact names', () => {
    expect(local.Config.parse({}).envAllow).toEqual([])
    expect(local.Config.parse({ envAllow: ['SSH_AUTH_SOCK', 'ssh_auth_sock'] }).envAllow).toEqual(['SSH_AUTH_SOCK', 'ssh_auth_sock'])
  })

  it.each([
    ['an empty name', '', /must not be empty/],
    ['a name with =', 'A=B', /contains "="/],
    ['a name with NUL', 'A\0B', /NUL byte/],
    ['a DSH_* name', 'DSH_MODE', /DSH_\* namespace/],
    ['a dsh_* name in any case', 'dsh_debug', /DSH_\* namespace/],
  ])('refuses %s when the plugin loads', async (_label, name, message) => {
    const root = new Context()
    await expect(root.plugin(local, { envAllow: [name] })).rejects.toThrow(message)
  })

  it('refuses a value that is not a list of strings', async () => {
    const root = new Context()
    await expect(root.plugin(local, { envAllow: 'SSH_AUTH_SOCK' as unknown as string[] })).rejects.toThrow(/envAllow/)
  })
})
