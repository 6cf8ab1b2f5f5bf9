import { describe, expect, it } from 'vitest'
import { isScrubbed, isSubprocessError, scrubEnvironment } from 'dsh-subprocess'
import { envAllowProblem, isCredentialValue, isScrubbedName } from '../src/env'

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
  // Names the earlier rules missed.
  MYSQL_PWD: 'p',
  PWD_FILE: '/run/secrets/db',
  CI_JOB_JWT: 'eyJhbGciOiJSUzI1NiJ9.e30.c2ln',
  CI_JOB_JWT_V2: 'x',
  LDAP_BIND_PW: 'p',
  ROOT_PW2: 'p',
  STRIPE_SK: 'x',
  SK: 'x',
  SSH_PRIVATE: 'x',
  GPG_SIGNING: 'x',
  SLACK_WEBHOOK: 'x',
  KUBECONFIG: '/home/me/.kube/config',
  DOCKER_CONFIG: '/home/me/.docker',
  NETRC: '/home/me/.netrc',
  CURL_NETRC_FILE: '/home/me/.netrc',
  CLOUDSDK_CONFIG: '/home/me/.config/gcloud',
  AZURE_CONFIG_DIR: '/home/me/.azure',
  AWS_SHARED_CREDENTIALS_FILE: '/home/me/.aws/credentials',
  // Values the earlier rules missed, under names that say nothing.
  REPORT_URL: 'https://reports.example/upload?user=u&password=hunter2',
  LEGACY_URL: 'https://legacy.example/login?x=1&passwd=hunter2',
  MSSQL_URL: 'https://db.example/?pwd=hunter2',
  FEED_URL: 'https://feed.example/rss?token=abc123',
  GRAPH_URL: 'https://graph.example/me?access_token=abc123',
  MAPS_URL: 'https://maps.example/api?api_key=abc123',
  WEATHER_URL: 'https://weather.example/v1?apikey=abc123',
  CALLBACK_URL: 'https://cb.example/hook?secret=abc123',
  BLOB_URL: 'https://acct.blob.core.windows.net/c/f?sv=2022-11-02&se=2030-01-01&sig=abc%2Bdef',
  S3_URL: 'https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIA%2F&X-Amz-Signature=abc123',
  GIT_REMOTE: 'https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/org/repo.git',
  GITLAB_REMOTE: 'https://glpat-abcdefghij0123456789@gitlab.com/org/repo.git',
  SLACK_REMOTE: 'https://xoxb-123-456-abc@slack.example/',
  OPENAI_BASE: 'https://sk-proj-abc123@api.example/v1',
  CLASSIC_REMOTE: 'https://0123456789abcdef0123456789abcdef01234567@github.com/org/repo.git',
  ALERTS: 'https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX',
  DISCORD: 'https://discord.com/api/webhooks/123456789/abcDEF-ghi',
  TEAMS: 'https://org.webhook.office.com/webhookb2/abc@def/IncomingWebhook/123/456',
  CURL_HEADERS: 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc',
  EXTRA_HEADER: 'Proxy-Authorization: Basic dXNlcjpwYXNz',
  UPSTREAM_BEARER_HEADER_VALUE: 'x',
  HEADER_VALUE: 'Bearer 0123456789abcdef',
  BASIC_VALUE: 'Basic dXNlcjpwYXNz',
  STASHED: 'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
  NPM_LOGIN: 'npm_abcdefghijklmnopqrstuvwxyz0123456789',
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
  // What every shell and the common tools set; none may be dropped.
  PWD: '/home/me/project',
  OLDPWD: '/home/me',
  LC_ALL: 'C.UTF-8',
  LC_CTYPE: 'sk_SK.UTF-8',
  LC_MESSAGES: 'C',
  SSH_TTY: '/dev/pts/3',
  SSH_CONNECTION: '10.0.0.1 51000 10.0.0.2 22',
  SHLVL: '2',
  EDITOR: 'vim',
  VISUAL: 'vim',
  PAGER: 'less',
  MANPAGER: 'less -R',
  KUBE_EDITOR: 'vim',
  NODE_OPTIONS: '--max-old-space-size=4096',
  HOSTNAME: 'devbox',
  USER: 'me',
  LOGNAME: 'me',
  SHELL: '/bin/bash',
  TMPDIR: '/tmp',
  XDG_RUNTIME_DIR: '/run/user/1000',
  XDG_CONFIG_HOME: '/home/me/.config',
  COLORTERM: 'truecolor',
  TERM_PROGRAM: 'vscode',
  TERM_SESSION_ID: 'w0t0p0:1234',
  HISTFILE: '/home/me/.bash_history',
  HISTSIZE: '1000',
  PYTHONPATH: '/home/me/lib',
  VIRTUAL_ENV: '/home/me/.venv',
  GOPATH: '/home/me/go',
  GOPRIVATE: 'github.com/org/*',
  CARGO_HOME: '/home/me/.cargo',
  JAVA_HOME: '/usr/lib/jvm/default',
  AWS_PROFILE: 'dev',
  AWS_REGION: 'eu-west-1',
  AWS_CONFIG_FILE: '/home/me/.aws/config',
  KUBE_NAMESPACE: 'default',
  PWDEBUG: '1',
  PW_TEST_HTML_REPORT_OPEN: 'never',
  SKIP_TESTS: '1',
  TASK_ID: '7',
  DISK_PATH: '/dev/sda',
  CI: 'true',
  CI_JOB_ID: '42',
  GPG_TTY: '/dev/pts/3',
  LESSOPEN: '| /usr/bin/lesspipe %s',
  DOCS_URL: 'https://docs.example/guide?page=2&sort=asc#webhooks',
  SEARCH_URL: 'https://search.example/?q=token+bucket&tokenizer=bpe',
  HOOK_DOCS: 'https://docs.example/webhooks/',
  MOTD: 'Basic usage: see the bearer of this note',
  SSH_REMOTE: 'ssh://git@gitlab.com/org/repo.git',
  LOCALE_NOTE: 'sk_SK task-runner disk-usage',
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

  it('classifies the names the earlier rules missed, and keeps their look-alikes', () => {
    for (const name of [
      'MYSQL_PWD',
      'mysql_pwd',
      'DB_PWD2',
      'PWD_FILE',
      'CI_JOB_JWT',
      'JWT',
      'LDAP_BIND_PW',
      'PW',
      'STRIPE_SK',
      'sk_live',
      'SSH_PRIVATE',
      'PRIVATE_REGISTRY',
    ]) {
      expect(isScrubbedName(name), name).toBe(true)
    }
    for (const name of ['SIGNING_CERT', 'DISCORD_WEBHOOK_URL', 'KUBECONFIG', 'kubeconfig', 'DOCKER_CONFIG', 'NETRC', 'CLOUDSDK_CONFIG', 'AZURE_CONFIG_DIR']) {
      expect(isScrubbedName(name), name).toBe(true)
    }
    for (const name of [
      'PWD',
      'OLDPWD',
      'pwd',
      'PWDEBUG',
      'PW_TEST_REPORTER',
      'PWTEST_SKIP',
      'SKIP',
      'TASK',
      'DISK_SIZE',
      'GOPRIVATE',
      'DOCKER_HOST',
      'DOCKER_CONFIG_DIRS_NOTE',
      'AWS_PROFILE',
    ]) {
      expect(isScrubbedName(name), name).toBe(false)
    }
  })

  it('classifies each value shape the earlier rules missed, and a near miss of each', () => {
    const shapes: [string, boolean][] = [
      // Secrets in a URL query, and queries that only look alike.
      ['https://h/p?password=x', true],
      ['https://h/p?a=1&passwd=x', true],
      ['https://h/p?pwd=x', true],
      ['https://h/p?token=x', true],
      ['https://h/p?access_token=x', true],
      ['https://h/p?api_key=x', true],
      ['https://h/p?apikey=x', true],
      ['https://h/p?secret=x', true],
      ['https://h/p?sv=1&sig=x', true],
      ['https://h/p?client_secret=x', true],
      ['https://h/p?X-Amz-Security-Token=x', true],
      ['https://h/p?token=', false],
      ['https://h/p?tokenizer=x&passage=y', false],
      ['https://h/p?sort_key_name=x', false],
      // Tokens as the user of a URL, and ordinary users.
      ['https://ghp_xxx@github.com/o/r', true],
      ['https://github_pat_11AAA@github.com/o/r', true],
      ['https://glpat-xxx@gitlab.com/o/r', true],
      ['https://xoxb-1-2-x@slack.example', true],
      ['https://sk-xxx@api.example', true],
      ['git+https://0123456789abcdef0123456789abcdef01234567@github.com/o/r', true],
      ['https://user@host/x', false],
      ['https://a.very.long.but.plain.user.name.here@host/x', false],
      ['ssh://git@github.com/o/r', false],
      // A vendor token on its own.
      ['ghp_abcdefghijklmnopqrstuvwxyz0123456789', true],
      ['token=xoxp-1234567890-abcdefghijklmnop', true],
      ['sk-ant-api03-abcdefghijklmnopqrstuv', true],
      ['sk_live_abcdefghijklmnopqrstuvwx', true],
      ['npm_abcdefghijklmnopqrstuvwxyz0123456789', true],
      ['ghp_short', false],
      ['npm_config_cache_folder_is_a_name_only', false],
      ['disk-abcdefghijklmnopqrstuvwxyz', false],
      // Incoming-webhook URLs.
      ['https://hooks.slack.com/services/T0/B0/X', true],
      ['https://hooks.slack.com/workflows/T0/A0/1/X', true],
      ['https://discord.com/api/webhooks/1/x', true],
      ['https://discordapp.com/api/webhooks/1/x', true],
      ['https://org.webhook.office.com/webhookb2/a/IncomingWebhook/b/c', true],
      ['https://ci.example/webhook/abc123', true],
      ['https://docs.example/webhooks/', false],
      ['https://slack.com/help', false],
      // HTTP authorization.
      ['Authorization: token abc', true],
      ['-H "authorization:Bearer x"', true],
      ['Proxy-Authorization: Basic dTpw', true],
      ['Bearer abcdefgh12', true],
      ['Basic dXNlcjpwYXNz', true],
      ['Basic dTpw', true],
      ['Basic usage', false],
      ['Basic Auth', false],
      ['the bearer of bad news', false],
      ['X-Authorized-Party value', false],
    ]
    for (const [value, expected] of shapes) expect(isCredentialValue(value), value).toBe(expected)
  })

  it('combines both in isScrubbed', () => {
    expect(isScrubbed('DATABASE_URL', 'postgres://u:p@h/db')).toBe(true)
    expect(isScrubbed('DATABASE_URL', 'postgres://h/db')).toBe(false)
    expect(isScrubbed('MY_PASS', undefined)).toBe(true)
    expect(isScrubbed('HOME', undefined)).toBe(false)
  })

  it('judges a variable again when its value changed between scrubs (the remembered verdicts follow the value)', () => {
    const plain = { DATABASE_URL: 'postgres://h/db' }
    const secret = { DATABASE_URL: 'postgres://u:p@h/db' }
    expect(scrubEnvironment(plain)).toEqual(plain)
    expect(scrubEnvironment(secret)).toEqual({})
    expect(scrubEnvironment(plain)).toEqual(plain)
    expect(scrubEnvironment(secret)).toEqual({})
    // An allow-list still wins over a remembered verdict.
    expect(scrubEnvironment(secret, {}, { allow: ['DATABASE_URL'] })).toEqual(secret)
  })

  it('explains why an allow-list entry is refused', () => {
    expect(envAllowProblem('SSH_AUTH_SOCK')).toBeUndefined()
    expect(envAllowProblem('')).toMatch(/must not be empty/)
    expect(envAllowProblem('A=B')).toMatch(/contains "="/)
    expect(envAllowProblem('A\0B')).toMatch(/NUL/)
    expect(envAllowProblem('Dsh_Mode')).toMatch(/DSH_\* namespace/)
  })
})
