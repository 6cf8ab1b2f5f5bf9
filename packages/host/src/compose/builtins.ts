/** Imports one plugin module on demand; only the plugins a cordis.yml names are ever loaded. */
export type PluginImporter = () => Promise<unknown>

/**
 * The family's packages by name, so a cordis.yml resolves `name: dsh-terminal` from any working
 * directory (the loader alone resolves bare names from its own folder, i.e. through hoisting).
 * Lazy, so a composition without the shell backend never loads node-pty.
 */
export const FAMILY_BUILTINS: Readonly<Record<string, PluginImporter>> = Object.freeze({
  'dsh-agent': () => import('dsh-agent'),
  'dsh-tools': () => import('dsh-tools'),
  'dsh-jobs': () => import('dsh-jobs'),
  'dsh-tool-jobs': () => import('dsh-tool-jobs'),
  'dsh-subprocess-local': () => import('dsh-subprocess-local'),
  'dsh-subprocess-remote': () => import('dsh-subprocess-remote'),
  'dsh-sandbox-local': () => import('dsh-sandbox-local'),
  'dsh-sandbox-policy': () => import('dsh-sandbox-policy'),
  'dsh-terminal': () => import('dsh-terminal'),
  'dsh-terminal-bash': () => import('dsh-terminal-bash'),
  'dsh-tool-terminal': () => import('dsh-tool-terminal'),
  'dsh-terminal-snapshot': () => import('dsh-terminal-snapshot'),
  // The host's own plugin: the opt-in audit log (examples/audited.yml).
  'dsh-terminal-mcp/audit': () => import('../audit/plugin'),
  'dsh-terminal-recorder': () => import('dsh-terminal-recorder'),
})
