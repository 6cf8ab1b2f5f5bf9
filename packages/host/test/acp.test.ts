import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Agent } from 'dsh-agent'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AcpSessionNotification, executeProjected, toNotificationMessage, toolCallFinished } from '../src/acp/projection'
import type { Composition } from '../src/compose/load-config'
import { load, SNAPSHOT_CONFIG } from './helpers'
import { SCRIPT } from './script'

/** The official ACP TypeScript SDK's zod schemas (generated from the protocol's JSON Schema). */
interface ZodLike {
  safeParse(value: unknown): { success: true; data: unknown } | { success: false; error: { message: string } }
}
let schemas: { zSessionNotification: ZodLike; zToolKind: ZodLike }

let composition: Composition
let agent: Agent

beforeAll(async () => {
  // The SDK exports its schema JSON but not the zod module; locate the module next to it.
  const schemaJson = createRequire(import.meta.url).resolve('@agentclientprotocol/sdk/schema/v1/schema.json')
  const zodModule = join(dirname(schemaJson), '../../dist/v1/schema/zod.gen.js')
  schemas = (await import(/* @vite-ignore */ pathToFileURL(zodModule).href)) as typeof schemas
  composition = await load(SNAPSHOT_CONFIG)
  agent = await composition.agents.create()
})

afterAll(async () => {
  await agent.dispose()
  await composition.dispose()
})

/**
 * Valid against the SDK's schema and unchanged by it. The generated schema is lenient (an invalid
 * optional field becomes undefined instead of failing), so a round trip that drops or rewrites
 * nothing is what proves every field valid.
 */
function expectValidNotification(notification: AcpSessionNotification): void {
  const parsed = schemas.zSessionNotification.safeParse(notification)
  if (!parsed.success) throw new Error(`invalid ACP session/update: ${parsed.error.message}`)
  expect(JSON.parse(JSON.stringify(parsed.data))).toEqual(JSON.parse(JSON.stringify(notification)))
  expect(schemas.zToolKind.safeParse(notification.update.kind).success).toBe(true)
  expect(Object.keys(notification.update).sort()).toEqual(
    ['sessionUpdate', 'toolCallId', 'title', 'kind', 'status', 'content', ...('rawInput' in notification.update ? ['rawInput'] : [])].sort(),
  )
}

describe('ACP projection through the snapshot overlay', () => {
  it('emits tool_call then tool_call_update for every call, each valid against the ACP SDK schema', async () => {
    const notifications: AcpSessionNotification[] = []
    for (const request of SCRIPT) {
      const before = notifications.length
      await executeProjected(
        composition.tools,
        'acp-session-1',
        { callId: `call-${request.id}`, name: request.tool, arguments: request.arguments, agent },
        (n) => notifications.push(n),
      )
      const [started, finished] = notifications.slice(before)
      expect(notifications.length - before).toBe(2)
      expect(started!.update).toMatchObject({ sessionUpdate: 'tool_call', toolCallId: `call-${request.id}`, status: 'in_progress', content: [] })
      expect(finished!.update).toMatchObject({ sessionUpdate: 'tool_call_update', toolCallId: `call-${request.id}` })
    }
    for (const notification of notifications) {
      expectValidNotification(notification)
      expect(notification.update).not.toHaveProperty('locations')
    }
    const kinds = Object.fromEntries(notifications.filter((n) => n.update.sessionUpdate === 'tool_call').map((n) => [n.update.toolCallId, n.update.kind]))
    expect(kinds).toMatchObject({
      'call-1': 'execute',
      'call-2': 'execute',
      'call-3': 'read',
      'call-4': 'execute',
      'call-5': 'execute',
      'call-8': 'read',
      'call-9': 'delete',
    })
    const missing = notifications.find((n) => n.update.toolCallId === 'call-10' && n.update.sessionUpdate === 'tool_call_update')!
    expect(missing.update).toMatchObject({
      status: 'failed',
      content: [{ type: 'content', content: { type: 'text', text: 'Error: unknown PTY session pty-1' } }],
    })
    expect(notifications).toMatchSnapshot()
  })

  it('wraps a notification as the JSON-RPC session/update message an ACP client receives', () => {
    const message = toNotificationMessage(
      toolCallFinished('s', {
        callId: 'c',
        name: 'terminal_list',
        content: [{ type: 'text', text: '(no terminal sessions)' }],
        isError: false,
        presentation: { kind: 'read', title: 'list terminal sessions', rawInput: {} },
      }),
    )
    expect(message).toEqual({
      jsonrpc: '2.0',
      method: 'session/update',
      params: {
        sessionId: 's',
        update: {
          sessionUpdate: 'tool_call_update',
          toolCallId: 'c',
          title: 'list terminal sessions',
          kind: 'read',
          status: 'completed',
          content: [{ type: 'content', content: { type: 'text', text: '(no terminal sessions)' } }],
          rawInput: {},
        },
      },
    })
    expectValidNotification(message.params)
  })
})
