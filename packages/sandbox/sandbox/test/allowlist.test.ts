import { describe, expect, it } from 'vitest'
import { allowedByList, assertConfineRequest, hostPatternProblem, isRequestableHost, parseHostPattern, SandboxError } from 'dsh-sandbox'

const list = (...entries: string[]) => entries.map((entry) => parseHostPattern(entry))

describe('the egress allowlist grammar and matching rule', () => {
  it('a name matches itself without case or trailing dot, on any port unless one is named', () => {
    const patterns = list('GitHub.com.', 'registry.npmjs.org:443')
    expect(allowedByList(patterns, 'github.com', 443)?.text).toBe('GitHub.com.')
    expect(allowedByList(patterns, 'GITHUB.COM.', 22)?.text).toBe('GitHub.com.')
    expect(allowedByList(patterns, 'registry.npmjs.org', 443)?.text).toBe('registry.npmjs.org:443')
    expect(allowedByList(patterns, 'registry.npmjs.org', 80)).toBeUndefined()
    expect(allowedByList(patterns, 'api.github.com', 443)).toBeUndefined()
    expect(allowedByList(patterns, 'github.com.evil.example', 443)).toBeUndefined()
  })

  it('a wildcard matches subdomains at any depth, never the bare domain or a look-alike', () => {
    const patterns = list('*.example.com')
    expect(allowedByList(patterns, 'a.example.com', 80)).toBeDefined()
    expect(allowedByList(patterns, 'a.b.example.com', 80)).toBeDefined()
    expect(allowedByList(patterns, 'example.com', 80)).toBeUndefined()
    expect(allowedByList(patterns, 'badexample.com', 80)).toBeUndefined()
    expect(allowedByList(patterns, 'example.com.attacker.net', 80)).toBeUndefined()
  })

  it('an IP literal matches only an IP entry, IPv6 compared in its shortest form', () => {
    const patterns = list('10.0.0.7', '[2001:db8::1]:443', '*.example.com')
    expect(allowedByList(patterns, '10.0.0.7', 80)).toBeDefined()
    expect(allowedByList(patterns, '2001:0db8:0:0:0:0:0:1', 443)).toBeDefined()
    expect(allowedByList(patterns, '[2001:db8::1]', 443)).toBeDefined()
    expect(allowedByList(patterns, '2001:db8::1', 80)).toBeUndefined()
    expect(allowedByList(patterns, '10.0.0.8', 80)).toBeUndefined()
  })

  it('what a client may ask a proxy for: names of DNS labels and IP literals, nothing a resolver could read less of', () => {
    for (const host of ['github.com', 'GitHub.com.', 'a_b.example', '10.0.0.1', '::1', '[2001:db8::1]', 'x'.repeat(63)])
      expect(isRequestableHost(host), host).toBe(true)
    for (const host of [
      '10.0.0.9\u0000.wild.test',
      'a b.test',
      'evil.test\n[I] forged',
      '',
      '.',
      'a..b',
      'fe80::1%lo',
      '-a.test',
      `${'x'.repeat(64)}.test`,
      `${'a.'.repeat(127)}ab`,
    ]) {
      expect(isRequestableHost(host), JSON.stringify(host)).toBe(false)
    }
  })

  it('malformed entries are refused with a reason', () => {
    expect(hostPatternProblem('')).toMatch(/non-empty/)
    expect(hostPatternProblem('*.com')).toMatch(/whole top-level domain/)
    expect(hostPatternProblem('*')).toMatch(/not a host name/)
    expect(hostPatternProblem('https://github.com')).toMatch(/not a host name/)
    expect(hostPatternProblem('git hub.com')).toMatch(/not a host name/)
    expect(hostPatternProblem('a.*.com')).toMatch(/not a host name/)
    expect(hostPatternProblem('github.com:0')).toMatch(/invalid port/)
    expect(hostPatternProblem('-bad.com')).toMatch(/not a host name/)
    expect(hostPatternProblem('github.com')).toBeUndefined()
    expect(hostPatternProblem('::1')).toBeUndefined()
    expect(() => parseHostPattern('*.com')).toThrow(TypeError)
  })

  it('every provider refuses a malformed allowedHosts with INVALID_POLICY', () => {
    const base = { mode: 'workspace-write' as const, workspaceRoot: '/w', network: 'allowlist' as const }
    expect(() => assertConfineRequest(['sh'], { ...base, allowedHosts: ['ok.example', '*.org'] })).toThrow(SandboxError)
    expect(() => assertConfineRequest(['sh'], { ...base, allowedHosts: 'github.com' as unknown as string[] })).toThrow(/must be a list/)
    expect(() => assertConfineRequest(['sh'], { ...base, network: 'lan' as never })).toThrow(/none, host or allowlist/)
    expect(() => assertConfineRequest(['sh'], { ...base, allowedHosts: ['github.com'] })).not.toThrow()
  })
})
