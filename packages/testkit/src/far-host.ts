import { type ChildProcess, execFileSync, spawn } from 'node:child_process'

/**
 * A host "elsewhere" for egress tests: a network namespace of the test's own, joined to this one
 * by a veth pair, running an HTTP server on :8080 and a TCP greeter on :2222. Nothing leaves the
 * machine; the servers exit on their own after a few minutes should the test die first.
 */
export interface FarHost {
  /** The namespace's name (`ip netns exec NAME …` runs a command there). */
  readonly namespace: string
  /** The far host's address, reachable from this namespace. */
  readonly address: string
  /** Remove the servers, the namespace and the veth pair. */
  stop(): Promise<void>
}

/** HTTP answers say which path and Host they got; the greeter says FAR-TCP, then echoes. */
const SERVER_SCRIPT = `
const http = require('node:http'); const net = require('node:net');
const web = http.createServer((request, response) => { response.end('far host: ' + request.method + ' ' + request.url + ' for ' + request.headers.host); });
const greeter = net.createServer((socket) => { socket.write('FAR-TCP\\n'); socket.pipe(socket); });
let listening = 0;
const ready = () => { if (++listening === 2) process.stdout.write('ready\\n'); };
web.listen(8080, '0.0.0.0', ready); greeter.listen(2222, '0.0.0.0', ready);
setTimeout(() => process.exit(0), 300000).unref();
setInterval(() => {}, 1000);
`

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] })
}

/** Another server for the far host: its argv, and the output line that says it listens. */
export interface FarServer {
  readonly argv: readonly string[]
  readonly ready: RegExp
}

/** Create the namespace and start its servers; resolves once every one of them listens. */
export async function startFarHost(extraServers: readonly FarServer[] = []): Promise<FarHost> {
  const tag = process.pid % 100_000
  const namespace = `dsh-egress-${tag}`
  const outer = `dsheg${tag}h`
  const inner = `dsheg${tag}f`
  const subnet = `10.213.${tag % 250}`
  const address = `${subnet}.2`
  const servers: ChildProcess[] = []
  const stop = async () => {
    for (const server of servers) server.kill('SIGKILL')
    await Promise.all(
      servers.map((server) => (server.exitCode === null && server.signalCode === null ? new Promise((resolve) => server.once('exit', resolve)) : undefined)),
    )
    try {
      ip('netns', 'del', namespace)
    } catch {}
    try {
      ip('link', 'del', outer)
    } catch {}
  }
  try {
    await stop()
    ip('netns', 'add', namespace)
    ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner)
    ip('link', 'set', inner, 'netns', namespace)
    ip('addr', 'add', `${subnet}.1/30`, 'dev', outer)
    ip('link', 'set', outer, 'up')
    ip('netns', 'exec', namespace, 'ip', 'addr', 'add', `${address}/30`, 'dev', inner)
    ip('netns', 'exec', namespace, 'ip', 'link', 'set', inner, 'up')
    ip('netns', 'exec', namespace, 'ip', 'link', 'set', 'lo', 'up')
    for (const { argv, ready } of [{ argv: [process.execPath, '-e', SERVER_SCRIPT], ready: /^ready$/m }, ...extraServers]) {
      const server = spawn('ip', ['netns', 'exec', namespace, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] })
      servers.push(server)
      await readyLine(server, ready)
    }
  } catch (error) {
    await stop()
    throw error
  }
  return { namespace, address, stop }
}

function readyLine(server: ChildProcess, ready: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = ''
    const read = (chunk: string) => {
      output += chunk
      if (ready.test(output)) resolve()
    }
    server.stdout?.setEncoding('utf8').on('data', read)
    server.stderr?.setEncoding('utf8').on('data', read)
    server.once('exit', (code) => reject(new Error(`the far host's server exited (${code}): ${output}`)))
  })
}
