import { describe, expect, it } from 'vitest'
import { envAllowProblem, isCredentialValue, isScrubbed, isScrubbedName, isSubprocessError, scrubEnvironment } from 'dsh-subprocess'

/** What an attacker run found reaching the sandboxed shell, plus the existing families. */
const CREDENTIALS: Record<string, string> = {
  DATABASE_URL: 'postgres://u:secret@host/db',
  REDIS_URL: 'redis://:secret@cache:6379/0',
  http_proxy: 'http://u:p@proxy:3128',
  HTTPS_PROXY: 'u:p@proxy:3128',
  PIP_INDEX_URL: 'https://u:pa/ss+word@pypi.example/simple',
  AZURE_STORAGE_CONNECTION_STRING: 'DefaultEndpointsProtocol=https;AccountName=a;AccountKey=c2VjcmV0;EndpointSuffix=core.windows.net',
  SQL_CONN: 'Server=db;Database=app;User Id=u;Password=secret;',
  NPM_CONFIG__AUTH: 'dTpw',
  'npm_config_//registry.example/:_authToken': 't',
  npm_config__password: 'cA==',
  GH_PAT: 'ghp_x',
  GITHUB_PAT: 'ghp_x',
  PAT: 'ghp_x',
  SSH_AUTH_SOCK: '/tmp/ssh-agent.sock',
  COOKIE: 'sid=1',
  HTTP_COOKIE: 'sid=1',
  BEARER: 'b',
  API_BEARER_VALUE: 'b',
  SENTRY_DSN: 'https://pub@o1.ingest.sentry.io/1',
  DSN: 'x',
  HF_AUTH: 'hf_x',
  DOCKER_AUTH_CONFIG: '{"auths":{}}',
  MY_PASS: 'p',
  AUTHORIZATION: 'Basic dTpw',
  PROXY_AUTHENTICATION: 'x',
  GOOGLE_OAUTH_CLIENT: 'x',
  GIT_AUTHORIZED: 'x',
  PHPSESSID: 'x',
  JSESSIONID: 'x',
  OPENAI_API_KEY: 'k',
  github_token: 't',
  DB_Password: 'p',
  MYSQL_PASSWD: 'p',
  AWS_SECRET_ACCESS_KEY: 's',
  AWS_SESSION_TOKEN: 's',
  GPG_PASSPHRASE: 'p',
  GOOGLE_APPLICATION_CREDENTIALS: '/c.json',
  DSH_MODE: 'x',
  dsh_debug: '1',
}

/** Look-alikes that must survive: what shells, git and tools need. */
const HARMLESS: Record<string, string> = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  MANPATH: ':/opt/node@20/share/man',
  PATHEXT: '.COM',
  PATCH_LEVEL: '3',
  HOME: '/home/me',
  LANG: 'C.UTF-8',
  TERM: 'xterm-256color',
  GIT_AUTHOR_NAME: 'Ada',
  GIT_AUTHOR_EMAIL: 'ada@example.org',
  GIT_COMMITTER_EMAIL: 'ada@example.org',
  AUTHOR: 'Ada',
  CERT_AUTHORITY: '/etc/ssl/ca.pem',
  HOMEPAGE: 'https://user@example.org/profile',
  NO_PROXY_URL: 'http://proxy:3128',
  REPO: 'git@github.com:org/repo.git',
  SSH_REPO: 'ssh://git@github.com:22/org/repo.git',
  DISPLAY: ':0',
  XDG_SESSION_ID: '3',
  DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1000/bus',
  DESKTOP_SESSION: 'gnome',
  LS_COLORS: 'rs=0:di=01;34:ln=01;36:*.tar=01;31',
  PS1: '\\u@\\h:\\w\\$ ',
  XDSH_THING: 'x',
  EMPTY: '',
}

describe('scrubEnvironment', () => {
  it('drops every credential family, by name in any case or by a password-carrying value', () => {
    const env = scrubEnvironment({ ...CREDENTIALS, ...HARMLESS })
    for (const name of Object.keys(CREDENTIALS)) expect(env, name).not.toHaveProperty([name])
    expect(env).toEqual(HARMLESS)
  })

  it('lets explicit overrides win, including a scrubbed name, and removes names set to undefined', () => {
    const env = scrubEnvironment(
      { PATH: '/usr/bin', TERM: 'xterm', API_KEY: 'inherited' },
      { TERM: 'dumb', API_KEY: 'explicit', PATH: undefined, DSH_MARKER: 'on', DATABASE_URL: 'postgres://u:p@h/db' },
      { allow: ['PATH'] },
    )
    expect(env).toEqual({ TERM: 'dumb', API_KEY: 'explicit', DSH_MARKER: 'on', DATABASE_URL: 'postgres://u:p@h/db' })
  })

  it('keeps allow-listed names whatever their name or value, exactly and case-sensitively', () => {
    const inherited = { SSH_AUTH_SOCK: '/tmp/agent', DATABASE_URL: 'postgres://u:p@h/db', ssh_auth_sock: '/tmp/other', GH_PAT: 'x' }
    expect(scrubEnvironment(inherited, {}, { allow: ['SSH_AUTH_SOCK', 'DATABASE_URL', 'NOT_SET'] })).toEqual({
      SSH_AUTH_SOCK: '/tmp/agent',
      DATABASE_URL: 'postgres://u:p@h/db',
    })
  })

  it('refuses an allow-list that could open the harness namespace or names no variable, with INVALID_SPEC', () => {
    for (const name of ['DSH_MODE', 'dsh_debug', '', 'A=B', 'A\0B']) {
      const error = (() => {
        try {
          scrubEnvironment({ DSH_MODE: 'x' }, {}, { allow: [name] })
        } catch (caught) {
          return caught
        }
        return undefined
      })()
      expect(isSubprocessError(error, 'INVALID_SPEC'), JSON.stringify(name)).toBe(true)
    }
  })

  it('skips inherited entries whose value is undefined and does not mutate its inputs', () => {
    const inherited = { A: 'a', B: undefined as string | undefined }
    const overrides = { C: 'c' }
    const allow = ['A']
    expect(scrubEnvironment(inherited, overrides, { allow })).toEqual({ A: 'a', C: 'c' })
    expect(inherited).toEqual({ A: 'a', B: undefined })
    expect(overrides).toEqual({ C: 'c' })
    expect(allow).toEqual(['A'])
  })
})

describe('classification', () => {
  it('classifies names alone', () => {
    expect(isScrubbedName('SSH_AUTH_SOCK')).toBe(true)
    expect(isScrubbedName('KEYCHAIN')).toBe(true)
    expect(isScrubbedName('NPM_TOKEN')).toBe(true)
    expect(isScrubbedName('gh_pat')).toBe(true)
    expect(isScrubbedName('GH_PAT_2')).toBe(true)
    expect(isScrubbedName('Sentry_Dsn')).toBe(true)
    expect(isScrubbedName('GIT_AUTHOR_NAME')).toBe(false)
    expect(isScrubbedName('AUTHORS')).toBe(false)
    expect(isScrubbedName('AUTHORIZATION')).toBe(true)
    expect(isScrubbedName('AUTHORISATION')).toBe(true)
    expect(isScrubbedName('PATH')).toBe(false)
    expect(isScrubbedName('SPAT')).toBe(false)
    expect(isScrubbedName('XDSH_THING')).toBe(false)
    expect(isScrubbedName('DSH_')).toBe(true)
  })

  it('classifies values alone', () => {
    expect(isCredentialValue('postgres://u:secret@host/db')).toBe(true)
    expect(isCredentialValue('jdbc:mysql://u:p@host/db')).toBe(true)
    expect(isCredentialValue('a https://u:p@host b')).toBe(true)
    expect(isCredentialValue('https://user@host/x')).toBe(false)
    expect(isCredentialValue('https://host:8443/x')).toBe(false)
    expect(isCredentialValue('user:pass@proxy:3128')).toBe(true)
    expect(isCredentialValue('Endpoint=sb://ns/;SharedAccessKeyName=n;SharedAccessKey=k')).toBe(true)
    expect(isCredentialValue('/usr/bin:/bin')).toBe(false)
  })

  it('combines both in isScrubbed', () => {
    expect(isScrubbed('DATABASE_URL', 'postgres://u:p@h/db')).toBe(true)
    expect(isScrubbed('DATABASE_URL', 'postgres://h/db')).toBe(false)
    expect(isScrubbed('MY_PASS', undefined)).toBe(true)
    expect(isScrubbed('HOME', undefined)).toBe(false)
  })

  it('explains why an allow-list entry is refused', () => {
    expect(envAllowProblem('SSH_AUTH_SOCK')).toBeUndefined()
    expect(envAllowProblem('')).toMatch(/must not be empty/)
    expect(envAllowProblem('A=B')).toMatch(/contains "="/)
    expect(envAllowProblem('A\0B')).toMatch(/NUL/)
    expect(envAllowProblem('Dsh_Mode')).toMatch(/DSH_\* namespace/)
  })
})
