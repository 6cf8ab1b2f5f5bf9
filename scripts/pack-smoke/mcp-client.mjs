// Part of scripts/pack-smoke.ts, copied into the smoke project and run there, so the MCP SDK comes
// from that npm install, not from the workspace. It starts the installed `dsh-terminal-mcp` bin the
// way an MCP client does (no arguments, the project as cwd: the composition shipped in the package)
// and drives it with the SDK's Client over stdio. Any mismatch throws; the exit code says it.
// Usage: node mcp-client.mjs <bin> <expected version> <tool,names,sorted>
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'

const [bin, expectedVersion, expectedTools] = process.argv.slice(2)
if (!bin || !expectedVersion || !expectedTools) throw new Error('usage: node mcp-client.mjs <bin> <version> <tools>')

// The SDK passes the server only a few variables; the run's state directory goes along, so the
// private homes of this throwaway project stay in the run's own directory.
const stateHome = process.env.XDG_STATE_HOME ? { XDG_STATE_HOME: process.env.XDG_STATE_HOME } : {}
const env = { ...getDefaultEnvironment(), ...stateHome }
const transport = new StdioClientTransport({ command: bin, args: [], cwd: process.cwd(), stderr: 'pipe', env })
let serverStderr = ''
transport.stderr?.on('data', (chunk) => (serverStderr += chunk.toString('utf8')))
const client = new Client({ name: 'dsh-pack-smoke', version: '1.0.0' })
const protocolErrors = []
client.onerror = (error) => protocolErrors.push(error)

/** Throw with the server's stderr attached, so a CI log shows why. */
function fail(message) {
  throw new Error(`${message}\n--- server stderr ---\n${serverStderr}`)
}

function check(condition, message) {
  if (!condition) fail(message)
}

async function call(name, args) {
  const result = await client.callTool({ name, arguments: args })
  const text = result.content.map((block) => block.text).join('\n')
  check(!result.isError, `${name} ${JSON.stringify(args)} failed: ${text}`)
  return { text, structured: result.structuredContent ?? {} }
}

await client.connect(transport)
const server = client.getServerVersion()
check(server?.name === 'dsh-terminal', `initialize: server name ${JSON.stringify(server?.name)}, expected "dsh-terminal"`)
check(server?.version === expectedVersion, `initialize: server version ${JSON.stringify(server?.version)}, expected ${expectedVersion}`)
check(client.getServerCapabilities()?.tools !== undefined, 'initialize: no tools capability')

const { tools } = await client.listTools()
const names = tools
  .map((tool) => tool.name)
  .sort()
  .join(',')
check(names === expectedTools, `tools/list: ${names}, expected ${expectedTools}`)

const opened = await call('terminal_open', { type: 'shell', name: 'smoke' })
const sessionId = opened.structured.sessionId
check(typeof sessionId === 'string' && /^started terminal session \S+ \(smoke\) \[type: shell\]/.test(opened.text), `terminal_open: ${opened.text}`)

const sent = await call('terminal_send', { sessionId, text: 'echo "smoke-$((6 * 7)) in $(basename "$PWD")"' })
const workspace = process.cwd().split('/').pop()
check(sent.text.includes(`\nsmoke-42 in ${workspace}\n`), `terminal_send: the echo's output is missing:\n${sent.text}`)
check(
  /\[wait: stdin_read\]\n\[input: prompt\]\n\[exit: 0\]\n\[session: running\]$/.test(sent.text),
  `terminal_send: not settled at the prompt with exit 0:\n${sent.text}`,
)

const closed = await call('terminal_close', { sessionId })
check(closed.text === `closed terminal session ${sessionId}`, `terminal_close: ${closed.text}`)

await client.close()
check(protocolErrors.length === 0, `protocol errors (stdout must carry only JSON-RPC): ${protocolErrors.map(String).join('; ')}`)
console.log(JSON.stringify({ server, tools: tools.length, sessionId }))
