import { request } from 'node:http'
import type { Agent } from 'dsh-agent'
import type { ToolResult } from 'dsh-tools'
import type { Composition } from '../src/compose/load-config'
import { HumanGateway } from '../src/human/gateway'
import { startWebView, type WebView } from '../src/web/server'
import { DANGER_CONFIG, load } from './helpers'

/** A real composition (danger-full-access: no sandbox needed), one agent, and the web view on a free port. */
export interface WebFixture {
  readonly composition: Composition
  readonly agent: Agent
  readonly web: WebView
  readonly origin: string
  readonly token: string
  readonly log: string[]
  /** Call one tool as the agent and return its text. */
  call(name: string, args: Record<string, unknown>): Promise<{ text: string; result: ToolResult }>
  dispose(): Promise<void>
}

/** Start the fixture: composition, agent, gateway, web view. */
export async function startWebFixture(): Promise<WebFixture> {
  const log: string[] = []
  const composition = await load(DANGER_CONFIG, log)
  const agent = await composition.agents.create()
  const web = await startWebView(new HumanGateway(composition.root), { port: 0, log: (line) => log.push(line) })
  const url = new URL(web.url)
  let calls = 0
  return {
    composition,
    agent,
    web,
    origin: url.origin,
    token: url.searchParams.get('token')!,
    log,
    async call(name, args) {
      const result = await composition.tools.execute({ callId: `web-${++calls}`, name, arguments: args, agent })
      const text = result.content.map((block) => ('text' in block ? block.text : '')).join('')
      if (result.isError) throw new Error(`${name} failed: ${text}`)
      return { text, result }
    },
    async dispose() {
      await web.close()
      await agent.dispose()
      await composition.dispose()
    },
  }
}

/** One Server-Sent Event as the page receives it. */
export interface SseEvent {
  readonly event: string
  readonly data: string
}

/** An open event stream read with node:http: its status, the events so far, and a way to hang up. */
export interface SseClient {
  readonly status: number
  readonly events: SseEvent[]
  ended: boolean
  close(): void
}

/** Open `url` as an event stream and collect its events as they arrive. */
export function openEvents(url: string): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream' } }, (res) => {
      const client: SseClient = { status: res.statusCode ?? 0, events: [], ended: false, close: () => req.destroy() }
      let buffer = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        buffer += chunk
        for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, cut)
          buffer = buffer.slice(cut + 2)
          let event = 'message'
          const data: string[] = []
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event = line.slice(7)
            else if (line.startsWith('data: ')) data.push(line.slice(6))
          }
          client.events.push({ event, data: data.join('\n') })
        }
      })
      res.on('end', () => {
        client.ended = true
      })
      res.on('error', () => {
        client.ended = true
      })
      resolve(client)
    })
    req.on('error', reject)
    req.end()
  })
}

/** Everything a stream has shown so far: the screen replay plus decoded output. */
export function shownText(client: SseClient): string {
  return client.events
    .map((event) => {
      if (event.event === 'screen') return (JSON.parse(event.data) as { screen: string }).screen
      if (event.event === 'output') return Buffer.from(event.data, 'base64').toString('utf8')
      return ''
    })
    .join('')
}
