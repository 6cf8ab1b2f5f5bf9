// Sibling plugins the tests mount, imported by workspace path instead of as devDependencies so the
// shared pnpm lockfile does not change for test-only links. Each one still resolves its own
// dependencies (dsh-terminal, dsh-tools, …) through its own package, so module instances are shared.
export * as toolJobsPlugin from '../../../jobs/tool-jobs/src/index'
export * as bashPlugin from '../../terminal-bash/src/index'
export * as sandboxPolicyPlugin from '../../../sandbox/sandbox-policy/src/index'
export * as subprocessLocalPlugin from '../../../subprocess/subprocess-local/src/index'
