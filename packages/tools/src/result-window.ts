import type { z } from 'zod'

/** The two caps of a tool family's config: every result's ceiling, and the window a call gets without `maxBytes`. */
export interface ResultWindowConfig {
  /** The most one result may take, also when a call asks for more. */
  readonly maxResultBytes: number
  /** The window of a result whose call gives no `maxBytes`; unset means `maxResultBytes`. */
  readonly defaultMaxBytes?: number | undefined
}

/**
 * The rule every tool family's `Config` refines with (`.superRefine(refineResultWindow)`): a default
 * window larger than the cap could never be given, so it is a config error at load time.
 */
export function refineResultWindow(config: ResultWindowConfig, issues: z.RefinementCtx): void {
  if (config.defaultMaxBytes !== undefined && config.defaultMaxBytes > config.maxResultBytes) {
    issues.addIssue({
      code: 'custom',
      path: ['defaultMaxBytes'],
      message: `defaultMaxBytes (${config.defaultMaxBytes}) must be at most maxResultBytes (${config.maxResultBytes})`,
    })
  }
}

/** The config with its window resolved (`.transform(resolveResultWindow)`): no `defaultMaxBytes` means the whole cap. */
export function resolveResultWindow<T extends ResultWindowConfig>(config: T): Omit<T, 'defaultMaxBytes'> & { defaultMaxBytes: number } {
  const { defaultMaxBytes, ...rest } = config
  return { ...rest, defaultMaxBytes: defaultMaxBytes ?? config.maxResultBytes }
}
