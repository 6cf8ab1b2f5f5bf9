/**
 * Inherited names that look like credentials. A terminal is driven by a model, so anything a
 * process could echo back must not carry secrets by accident.
 */
export const CREDENTIAL_NAME_PATTERN = /KEY|PASSWORD|PASSWD|SECRET|TOKEN|PASSPHRASE|CREDENTIAL/i

/** The harness's own configuration namespace, never leaked into terminals. */
export const HARNESS_NAME_PATTERN = /^DSH_/i

/** True when an inherited variable of this name is dropped by {@link scrubEnvironment}. */
export function isScrubbedName(name: string): boolean {
  return CREDENTIAL_NAME_PATTERN.test(name) || HARNESS_NAME_PATTERN.test(name)
}

/**
 * The environment a terminal starts with: the inherited variables minus credential-shaped and
 * `DSH_*` names, then the explicit overrides, which win (`undefined` removes a name).
 */
export function scrubEnvironment(
  inherited: Readonly<Record<string, string | undefined>>,
  overrides: Readonly<Record<string, string | undefined>> = {},
): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(inherited)) {
    if (value === undefined || isScrubbedName(name)) continue
    env[name] = value
  }
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name]
    else env[name] = value
  }
  return env
}
