// Embedding the dsh family in a harness of your own: no cordis.yml, no MCP. The harness mounts the
// plugins on a Cordis context, creates an agent (the owner of everything it opens), and calls the
// model-facing tools through ctx.tools.execute, as a model's tool calls would arrive.
//
//   pnpm example:embed        (Linux with bubblewrap: sessions run under workspace-write)
//
// Outside this repository, install the packages instead: npm install @deepseek-ai/cordis dsh-agent
// dsh-tools dsh-subprocess-local dsh-sandbox-local dsh-sandbox-policy dsh-terminal
// dsh-terminal-bash dsh-tool-terminal
import { mkdtemp, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context, type Fiber } from '@deepseek-ai/cordis'
import * as agents from 'dsh-agent'
import * as sandbox from 'dsh-sandbox-local'
import * as sandboxPolicy from 'dsh-sandbox-policy'
import * as subprocess from 'dsh-subprocess-local'
import * as terminals from 'dsh-terminal'
import * as bash from 'dsh-terminal-bash'
import * as terminalTools from 'dsh-tool-terminal'
import * as tools from 'dsh-tools'
import type { Agent } from 'dsh-agent'
import type { ToolResult } from 'dsh-tools'

let calls = 0

/** One tool call as the model would make it; a failed call ends the example with its error. */
async function call(root: Context, agent: Agent, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const result = await root.tools.execute({ callId: `embed-${++calls}`, name, arguments: args, agent })
  const text = result.content.map((block) => block.text).join('\n')
  console.log(`→ ${name} ${JSON.stringify(args)}\n${text.replace(/^/gm, '  ')}`)
  if (result.isError) throw new Error(`${name} failed (${result.error?.code ?? 'tool error'}): ${text}`)
  return result
}

/** Fail unless a send's result shows `expected` and the command's exit status 0. */
function expectSuccess(result: ToolResult, expected: string): void {
  const text = result.content.map((block) => block.text).join('\n')
  if (!text.includes(expected) || !text.includes('[exit: 0]')) throw new Error(`expected "${expected}" and [exit: 0] in:\n${text}`)
}

const workspace = await realpath(await mkdtemp(join(tmpdir(), 'dsh-embed-')))
const root = new Context()
const fibers: Fiber[] = []
try {
  // Order matters only for readability: a plugin waits for the services it injects. Awaiting each
  // one makes an invalid config or a failing plugin throw here instead of only being logged.
  fibers.push(await root.plugin(agents))
  fibers.push(await root.plugin(tools))
  fibers.push(await root.plugin(subprocess))
  fibers.push(await root.plugin(sandbox))
  fibers.push(await root.plugin(sandboxPolicy, { mode: 'workspace-write', workspaceRoot: workspace }))
  fibers.push(await root.plugin(terminals))
  fibers.push(await root.plugin(bash))
  fibers.push(await root.plugin(terminalTools))

  const agent = await root.agents.create({ id: 'embed-agent' })
  try {
    const opened = await call(root, agent, 'terminal_open', { type: 'shell', name: 'main' })
    const sessionId = String(opened.meta?.sessionId)
    // Two commands in one persistent shell: the second sees the first one's directory and file.
    const wrote = await call(root, agent, 'terminal_send', {
      sessionId,
      text: 'mkdir -p notes && cd notes && echo "hello from the agent" > hello.txt && echo wrote',
    })
    expectSuccess(wrote, '\nwrote\n')
    const read = await call(root, agent, 'terminal_send', { sessionId, text: 'pwd && cat hello.txt' })
    expectSuccess(read, `${join(workspace, 'notes')}\nhello from the agent\n`)
    await call(root, agent, 'terminal_close', { sessionId })
  } finally {
    // Ending the agent closes whatever it still owns (sessions, jobs) and awaits their teardown.
    await agent.dispose()
  }
} finally {
  for (const fiber of fibers.reverse()) await fiber.dispose()
  await rm(workspace, { recursive: true, force: true })
}
console.log('embed: done')
