import { eventually } from 'dsh-testkit'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { MAX_BODY_BYTES } from '../src/web/http-io'
import { openEvents, shownText, startWebFixture, type WebFixture } from './web-fixture'

let fx: WebFixture
let sessionId: string

beforeEach(async () => {
  fx = await startWebFixture()
  await fx.call('terminal_open', { type: 'shell', name: 'main' })
  const listed = (await (await fetch(`${fx.origin}/sessions?token=${fx.token}`)).json()) as { sessions: { sessionId: string }[] }
  sessionId = listed.sessions[0]!.sessionId
  await fx.call('terminal_send', { sessionId, text: 'echo hello-from-agent' })
})

afterEach(async () => {
  await fx.dispose()
})

/** A POST as the page sends it, with overridable headers and body. */
function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${fx.origin}${path}`, {
    method: 'POST',
    headers: { origin: fx.origin, 'content-type': 'application/json', authorization: `Bearer ${fx.token}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

describe('web view over HTTP', () => {
  it('listens on 127.0.0.1 with a 64-hex-digit token in the URL', () => {
    expect(fx.web.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64}$/)
  })

  it('answers 401 "unauthorized" without the token or with a wrong one, everywhere', async () => {
    const wrong = 'f'.repeat(64)
    for (const path of ['/', '/sessions', `/sessions/${sessionId}/events`, '/assets/xterm.js', `/?token=${wrong}`, `/sessions?token=${fx.token.slice(1)}`]) {
      const response = await fetch(`${fx.origin}${path}`)
      expect({ path, status: response.status, body: await response.text() }).toEqual({ path, status: 401, body: 'unauthorized' })
      expect(response.headers.get('access-control-allow-origin')).toBeNull()
    }
    const posted = await post(`/sessions/${sessionId}/takeover`, { viewId: 'x' }, { authorization: `Bearer ${wrong}` })
    expect(posted.status).toBe(401)
  })

  it('serves the page and xterm.js from the package, with a strict policy and no CORS', async () => {
    const page = await fetch(fx.web.url)
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain(`/assets/xterm.js?token=${fx.token}`)
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'")
    expect(page.headers.get('access-control-allow-origin')).toBeNull()
    const script = await fetch(`${fx.origin}/assets/xterm.js?token=${fx.token}`)
    expect(script.status).toBe(200)
    expect((await script.text()).length).toBeGreaterThan(100_000)
    const css = await fetch(`${fx.origin}/assets/xterm.css?token=${fx.token}`)
    expect(css.headers.get('content-type')).toMatch(/^text\/css/)
  })

  it('lists the sessions of the host as JSON', async () => {
    const response = await fetch(`${fx.origin}/sessions?token=${fx.token}`)
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    const { sessions } = (await response.json()) as { sessions: Record<string, unknown>[] }
    expect(sessions).toHaveLength(1)
    expect(sessions[0]).toMatchObject({ sessionId, name: 'main', ownerId: fx.agent.id, status: { kind: 'running' }, type: 'shell' })
  })

  it('answers 404 NO_SESSION for an unknown session and NO_VIEW for an unknown view', async () => {
    const events = await fetch(`${fx.origin}/sessions/pty-999/events?token=${fx.token}`)
    expect(events.status).toBe(404)
    expect(((await events.json()) as { code: string }).code).toBe('NO_SESSION')
    const malformed = await fetch(`${fx.origin}/sessions/%E0%A4%A/events?token=${fx.token}`)
    expect(malformed.status).toBe(404)
    const takeover = await post(`/sessions/${sessionId}/takeover`, { viewId: 'nope' })
    expect(takeover.status).toBe(404)
    expect(((await takeover.json()) as { code: string }).code).toBe('NO_VIEW')
  })

  it('refuses a POST from another origin, without an origin, or not JSON', async () => {
    const foreign = await post(`/sessions/${sessionId}/takeover`, { viewId: 'x' }, { origin: 'http://evil.example' })
    expect(foreign.status).toBe(403)
    expect(((await foreign.json()) as { code: string }).code).toBe('FOREIGN_ORIGIN')
    const lookalike = await post(`/sessions/${sessionId}/takeover`, { viewId: 'x' }, { origin: fx.origin.replace('127.0.0.1', 'localhost') })
    expect(lookalike.status).toBe(403)
    const form = await post(`/sessions/${sessionId}/takeover`, 'viewId=x', { 'content-type': 'application/x-www-form-urlencoded' })
    expect(form.status).toBe(415)
  })

  it('answers 413 to a body over the bound', async () => {
    const response = await post(`/sessions/${sessionId}/input`, { viewId: 'x', data: 'a'.repeat(MAX_BODY_BYTES) })
    expect(response.status).toBe(413)
    expect(((await response.json()) as { code: string }).code).toBe('BODY_TOO_LARGE')
  })

  it('streams the screen, is read-only until take over, then types into the shell; one writer at a time', async () => {
    const first = await openEvents(`${fx.origin}/sessions/${sessionId}/events?token=${fx.token}`)
    const second = await openEvents(`${fx.origin}/sessions/${sessionId}/events?token=${fx.token}`)
    try {
      expect(first.status).toBe(200)
      await eventually(() => first.events.length > 0 && second.events.length > 0, 'the first events')
      const screen = JSON.parse(first.events[0]!.data) as { viewId: string; rows: number; cols: number; writing: boolean; screen: string }
      expect(first.events[0]!.event).toBe('screen')
      expect(screen).toMatchObject({ writing: false })
      expect(screen.rows).toBeGreaterThan(0)
      expect(screen.cols).toBeGreaterThan(0)
      expect(screen.screen).toContain('hello-from-agent')
      const other = (JSON.parse(second.events[0]!.data) as { viewId: string }).viewId

      const readOnly = await post(`/sessions/${sessionId}/input`, { viewId: screen.viewId, data: 'x' })
      expect(readOnly.status).toBe(403)
      expect(((await readOnly.json()) as { code: string }).code).toBe('NOT_WRITER')

      const took = await post(`/sessions/${sessionId}/takeover`, { viewId: screen.viewId })
      expect(await took.json()).toEqual({ writing: true })
      const refused = await post(`/sessions/${sessionId}/takeover`, { viewId: other })
      expect(refused.status).toBe(409)
      expect(((await refused.json()) as { code: string }).code).toBe('HUMAN_WRITER_TAKEN')

      const typed = await post(`/sessions/${sessionId}/input`, { viewId: screen.viewId, data: 'echo typed-over-$((6*7))\r' })
      expect(typed.status).toBe(200)
      await eventually(() => shownText(second).includes('typed-over-42'), 'the typed command to echo on the other view')
      const listed = (await (await fetch(`${fx.origin}/sessions?token=${fx.token}`)).json()) as { sessions: { human?: string }[] }
      expect(listed.sessions[0]!.human).toBe('typing')

      // The writer leaves (its stream closes): the other view may take over.
      first.close()
      await eventually(async () => (await post(`/sessions/${sessionId}/takeover`, { viewId: other })).status === 200, 'the writer role to free up')
      const released = await post(`/sessions/${sessionId}/release`, { viewId: other })
      expect(await released.json()).toEqual({ writing: false })
    } finally {
      first.close()
      second.close()
    }
  })

  it('counts an open stream as a person watching, and closing the connection closes the view', async () => {
    const human = async () => ((await (await fetch(`${fx.origin}/sessions?token=${fx.token}`)).json()) as { sessions: { human?: string }[] }).sessions[0]!.human
    expect(await human()).toBeUndefined()
    const client = await openEvents(`${fx.origin}/sessions/${sessionId}/events?token=${fx.token}`)
    await eventually(() => client.events.length > 0, 'the screen event')
    expect(await human()).toBe('watching')
    client.close()
    await eventually(async () => (await human()) === undefined, 'the view to close with its connection')
  })

  it('ends the stream with an end event when the session closes', async () => {
    const client = await openEvents(`${fx.origin}/sessions/${sessionId}/events?token=${fx.token}`)
    try {
      await eventually(() => client.events.length > 0, 'the screen event')
      await fx.call('terminal_close', { sessionId })
      await eventually(() => client.ended, 'the stream to end')
      expect(client.events.at(-1)!.event).toBe('end')
      expect(JSON.parse(client.events.at(-1)!.data)).toHaveProperty('reason')
    } finally {
      client.close()
    }
  })

  it('lists how many people watch and whether the one who took over types, in the words a refused take over uses', async () => {
    const entry = async () => ((await (await fetch(`${fx.origin}/sessions?token=${fx.token}`)).json()) as { sessions: Record<string, unknown>[] }).sessions[0]!
    const first = await openEvents(`${fx.origin}/sessions/${sessionId}/events?token=${fx.token}`)
    const second = await openEvents(`${fx.origin}/sessions/${sessionId}/events?token=${fx.token}`)
    try {
      await eventually(() => first.events.length > 0 && second.events.length > 0, 'the first events')
      const [mine, other] = [first, second].map((client) => (JSON.parse(client.events[0]!.data) as { viewId: string }).viewId)
      expect(await entry()).toMatchObject({ human: 'watching', people: { attached: 2 } })
      expect(await (await post(`/sessions/${sessionId}/takeover`, { viewId: mine })).json()).toEqual({ writing: true })
      const web = 'the web view in a browser'
      // Took over, typed nothing yet: the other person is told exactly that, and the list agrees.
      expect(await entry()).toMatchObject({ human: 'watching', people: { attached: 2, writer: { client: web, typing: false } } })
      const idle = (await (await post(`/sessions/${sessionId}/takeover`, { viewId: other })).json()) as { code: string; message: string }
      expect(idle.code).toBe('HUMAN_WRITER_TAKEN')
      expect(idle.message).toMatch(new RegExp(`^another person took over PTY session ${sessionId} from ${web} \\(not typing right now\\)`))
      expect(idle.message).not.toMatch(/is typing|already typing/)

      await post(`/sessions/${sessionId}/input`, { viewId: mine, data: 'echo web-typed\r' })
      expect(await entry()).toMatchObject({ human: 'typing', people: { attached: 2, writer: { client: web, typing: true } } })
      const busy = (await (await post(`/sessions/${sessionId}/takeover`, { viewId: other })).json()) as { code: string; message: string }
      expect(busy).toMatchObject({
        code: 'HUMAN_WRITER_TAKEN',
        message: expect.stringMatching(`^another person is typing in PTY session ${sessionId} from ${web}; `),
      })
    } finally {
      first.close()
      second.close()
    }
  })

  it("names the web view, not dsh-terminal attach, in the agent's HUMAN_ACTIVE after the person typed in the browser", async () => {
    const client = await openEvents(`${fx.origin}/sessions/${sessionId}/events?token=${fx.token}`)
    try {
      await eventually(() => client.events.length > 0, 'the screen event')
      const { viewId } = JSON.parse(client.events[0]!.data) as { viewId: string }
      await post(`/sessions/${sessionId}/takeover`, { viewId })
      expect((await post(`/sessions/${sessionId}/input`, { viewId, data: 'echo from-browser\r' })).status).toBe(200)
      const refused = await fx.composition.tools.execute({
        callId: 'web-human-active',
        name: 'terminal_send',
        arguments: { sessionId, text: 'ls' },
        agent: fx.agent,
      })
      const text = refused.content.map((block) => ('text' in block ? block.text : '')).join('')
      expect({ isError: refused.isError, code: refused.error?.code }).toEqual({ isError: true, code: 'HUMAN_ACTIVE' })
      expect(text).toContain(`a person is typing in PTY session ${sessionId} from the web view in a browser; your send was not written.`)
      expect(text).not.toContain('dsh-terminal attach')
    } finally {
      client.close()
    }
  })
})
