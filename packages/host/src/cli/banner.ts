/** Facts the banner shows. */
export interface BannerFacts {
  /** The composition being served. */
  configPath: string
  /** The working directory: `workspaceRoot: .` of the default composition. */
  workspace: string
  /** The repository checkout when running from one (`repositoryRoot()`); decides how a client starts the server. */
  repository: string | undefined
}

/**
 * How an MCP client should start this server: `pnpm --dir <repo> start` in a checkout, else
 * `npx -y dsh-terminal-mcp`, which runs an installed copy or fetches the package.
 */
export function launchCommand(repository: string | undefined): { command: string; args: string[] } {
  if (repository) return { command: 'pnpm', args: ['--silent', '--dir', repository, 'start'] }
  return { command: 'npx', args: ['-y', 'dsh-terminal-mcp'] }
}

/**
 * The short text printed on stderr when a person starts the server in a terminal: what it is, and
 * how to connect Claude Code, Codex or any MCP client instead of typing JSON-RPC by hand.
 */
export function banner(facts: BannerFacts): string {
  const { command, args } = launchCommand(facts.repository)
  const line = [command, ...args].map(shellQuote).join(' ')
  const json = JSON.stringify({ mcpServers: { 'dsh-terminal': { command, args } } }, null, 2)
  return [
    'dsh-terminal: persistent bash sessions for AI agents, served over MCP on stdin/stdout.',
    'It waits for an MCP client; connect one rather than typing here (Ctrl-C or Ctrl-D quits).',
    '',
    `  Claude Code:  claude mcp add dsh-terminal -- ${line}`,
    `  Codex:        codex mcp add dsh-terminal -- ${line}`,
    '  Any client (JSON config):',
    ...json.split('\n').map((text) => `    ${text}`),
    '',
    `  composition: ${facts.configPath}`,
    `  workspace:   ${facts.workspace} (the directory the client starts the server in)`,
    '',
  ].join('\n')
}

function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`
}
