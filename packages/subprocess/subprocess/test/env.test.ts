import { describe, expect, it } from 'vitest'
import { isScrubbedName, scrubEnvironment } from 'dsh-subprocess'

describe('scrubEnvironment', () => {
  it('drops credential-shaped names in any case and every DSH_* name', () => {
    const inherited = {
      PATH: '/usr/bin',
      HOME: '/home/me',
      OPENAI_API_KEY: 'k',
      github_token: 't',
      DB_Password: 'p',
      MYSQL_PASSWD: 'p',
      AWS_SECRET_ACCESS_KEY: 's',
      GPG_PASSPHRASE: 'p',
      GOOGLE_APPLICATION_CREDENTIALS: '/c.json',
      DSH_MODE: 'x',
      dsh_debug: '1',
      EMPTY: '',
    }
    expect(scrubEnvironment(inherited)).toEqual({ PATH: '/usr/bin', HOME: '/home/me', EMPTY: '' })
  })

  it('lets explicit overrides win, including a scrubbed name, and removes names set to undefined', () => {
    const env = scrubEnvironment(
      { PATH: '/usr/bin', TERM: 'xterm', API_KEY: 'inherited' },
      { TERM: 'dumb', API_KEY: 'explicit', PATH: undefined, DSH_MARKER: 'on' },
    )
    expect(env).toEqual({ TERM: 'dumb', API_KEY: 'explicit', DSH_MARKER: 'on' })
  })

  it('skips inherited entries whose value is undefined and does not mutate its inputs', () => {
    const inherited = { A: 'a', B: undefined as string | undefined }
    const overrides = { C: 'c' }
    expect(scrubEnvironment(inherited, overrides)).toEqual({ A: 'a', C: 'c' })
    expect(inherited).toEqual({ A: 'a', B: undefined })
    expect(overrides).toEqual({ C: 'c' })
  })

  it('classifies names', () => {
    expect(isScrubbedName('SSH_AUTH_SOCK')).toBe(false)
    expect(isScrubbedName('KEYCHAIN')).toBe(true)
    expect(isScrubbedName('NPM_TOKEN')).toBe(true)
    expect(isScrubbedName('XDSH_THING')).toBe(false)
    expect(isScrubbedName('DSH_')).toBe(true)
  })
})
