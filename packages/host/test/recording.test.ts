import { existsSync } from 'node:fs'
import { readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { fileURLToPath } from 'node:url'
import type { Agent } from 'dsh-agent'
import { eventually } from 'dsh-testkit'
import { parseAsciicast, type RecorderService } from 'dsh-terminal-recorder'
import { type Browser, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runReplay } from '../src/cli/replay'
import type { Composition } from '../src/compose/load-config'
import { HumanGateway } from '../src/human/gateway'
import { startWebView, type WebView } from '../src/web/server'
import { load, REPO_ROOT, tempDir } from './helpers'
import { runCli } from './process'

/** Debian's chromium, driven by playwright-core (no browser download here). */
const CHROMIUM = '/usr/bin/chromium'
const HAVE_CHROMIUM = existsSync(CHROMIUM)

/** `UPDATE_PLAYER_SCREENSHOT=1` refreshes the README's picture; otherwise the screenshot goes to the run's temp dir. */
const README_SCREENSHOT = fileURLToPath(new URL('../../../docs/recording-player.png', import.meta.url))

let composition: Composition
let agent: Agent
let recorder: RecorderService
let file: string
let scratch: { dir: string; remove: () => Promise<void> }
let sessionId: string

/** The repository's recorded overlay, unconfined (no bubblewrap needed), recording into a temp dir. */
async function recordedComposition(dir: string): Promise<string> {
  const path = join(dir, 'recorded.yml')
  await writeFile(
    path,
    `- id: base
  name: cordis:include
  config:
    path: ${join(REPO_ROOT, 'examples/recorded.yml')}
    patches:
      - id: base
        config:
          path: ${join(REPO_ROOT, 'cordis.yml')}
          patches:
            - id: sandbox-policy
              config: { mode: danger-full-access, workspaceRoot: . }
            - id: sandbox
              disabled: true
            - id: record
              disabled: false
              config: { dir: ${join(dir, 'recordings')}, maxBytesPerSession: 1048576, retentionDays: 14 }
`,
  )
  return path
}

async function call(name: string, args: Record<string, unknown>, callId: string): Promise<string> {
  const result = await composition.tools.execute({ callId, name, arguments: args, agent })
  const text = result.content.map((block) => ('text' in block ? block.text : '')).join('')
  if (result.isError) throw new Error(`${name} failed: ${text}`)
  return text
}

beforeAll(async () => {
  scratch = await tempDir('dsh-host-rec-')
  composition = await load(await recordedComposition(scratch.dir))
  recorder = composition.root.get('recorder') as RecorderService
  agent = await composition.agents.create()
  sessionId = /pty-\d+/.exec(await call('terminal_open', { type: 'shell', name: 'demo' }, 'open-1'))![0]
  await call('terminal_send', { sessionId, text: 'echo hello from the recorder' }, 'mcp-1')
  await call('terminal_send', { sessionId, text: "printf '%s\\n' alpha beta gamma" }, 'mcp-2')
  await call('terminal_send', { sessionId, text: 'seq 101 103' }, 'mcp-3')
  await call('terminal_send', { sessionId, text: 'ls /nonexistent-dir' }, 'mcp-4')
  await call('terminal_close', { sessionId }, 'close-1')
  await recorder.settled()
  file = join(recorder.directory, (await recorder.list())[0]!)
})

afterAll(async () => {
  await agent?.dispose()
  await composition?.dispose()
  await scratch?.remove()
})

/** Run `replay` in-process and return what it wrote to stdout and stderr, with its exit status. */
async function replay(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  const out: Buffer[] = []
  const err: Buffer[] = []
  stdout.on('data', (chunk: Buffer) => out.push(chunk))
  stderr.on('data', (chunk: Buffer) => err.push(chunk))
  const code = await runReplay(args, { stdout, stderr })
  return { code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }
}

describe('the recorded composition (examples/recorded.yml)', () => {
  it('mounts the recorder, which records the session with the tool call ids', async () => {
    expect(recorder.directory).toBe(join(scratch.dir, 'recordings'))
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    const cast = parseAsciicast(await readFile(file, 'utf8'))
    const markers = cast.events.filter((event) => event.code === 'm').map((event) => event.data)
    expect(markers).toEqual([
      'send 1 (call mcp-1)',
      'send 1 done (call mcp-1): stdin_read, exit 0',
      'send 2 (call mcp-2)',
      'send 2 done (call mcp-2): stdin_read, exit 0',
      'send 3 (call mcp-3)',
      'send 3 done (call mcp-3): stdin_read, exit 0',
      'send 4 (call mcp-4)',
      'send 4 done (call mcp-4): stdin_read, exit 2',
    ])
  })
})

describe('dsh-terminal-mcp replay', () => {
  it('prints the whole output with --speed 0, and from send K on with --from-marker K', async () => {
    const events = parseAsciicast(await readFile(file, 'utf8')).events
    const all = events.filter((event) => event.code === 'o').map((event) => event.data)
    const whole = await replay([file, '--speed', '0'])
    expect(whole).toEqual({ code: 0, stdout: all.join(''), stderr: '' })
    const fromThird = await replay([file, '--speed', '0', '--from-marker', '3'])
    expect(fromThird.code).toBe(0)
    expect(whole.stdout.endsWith(fromThird.stdout)).toBe(true)
    expect(fromThird.stdout).toContain('101\r\n102\r\n103')
    expect(fromThird.stdout).not.toContain('gamma')
    expect(fromThird.stdout).toContain('nonexistent-dir')
  })

  it('names the sends there are for a marker that is not, and refuses a bad command line', async () => {
    expect(await replay([file, '--from-marker', '9'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'dsh-terminal replay: the recording has no send 9: its sends are 1–4\n',
    })
    expect((await replay([file, '--speed', 'fast'])).stderr).toContain('--speed wants a number ≥ 0')
    expect((await replay([])).code).toBe(2)
    const missing = await replay([join(scratch.dir, 'nope.cast')])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('cannot play')
  })

  it('is a subcommand of the real command line', async () => {
    const run = await runCli(['replay', file, '--speed', '0', '--from-marker', '4'])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('nonexistent-dir')
    expect(run.stdout).not.toContain('alpha')
  })
})

describe('the web view', () => {
  let web: WebView
  let url: URL
  beforeAll(async () => {
    web = await startWebView(new HumanGateway(composition.root), { port: 0, log: () => {} })
    url = new URL(web.url)
  })
  afterAll(async () => {
    await web?.close()
  })

  it('lists and serves recordings behind its token only, and never a path outside the directory', async () => {
    const token = url.searchParams.get('token')!
    const name = file.split('/').at(-1)!
    expect((await fetch(`${url.origin}/recordings`)).status).toBe(401)
    expect((await fetch(`${url.origin}/recordings/${name}`)).status).toBe(401)
    // The player page too: without the token, or with another, nothing of it is served.
    expect((await fetch(`${url.origin}/player`)).status).toBe(401)
    expect((await fetch(`${url.origin}/player?token=${'0'.repeat(token.length)}`)).status).toBe(401)
    expect((await fetch(`${url.origin}/player?token=${token}`)).status).toBe(200)
    expect(await (await fetch(`${url.origin}/recordings?token=${token}`)).json()).toEqual({ enabled: true, recordings: [name] })
    const served = await fetch(`${url.origin}/recordings/${encodeURIComponent(name)}?token=${token}`)
    expect(served.status).toBe(200)
    expect(await served.text()).toBe(await readFile(file, 'utf8'))
    for (const bad of ['..%2Frecorded.yml', '%2Fetc%2Fpasswd', 'nothing.cast']) {
      const refused = await fetch(`${url.origin}/recordings/${bad}?token=${token}`)
      expect(refused.status).toBe(404)
      expect((await refused.json()).code).toBe('NO_RECORDING')
    }
  })

  describe.skipIf(!HAVE_CHROMIUM)(`the player in a real browser (needs ${CHROMIUM})`, () => {
    let browser: Browser
    beforeAll(async () => {
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
    })
    afterAll(async () => {
      await browser?.close()
    })

    async function screenText(page: Page): Promise<string> {
      const rows = await page.locator('#terminal .xterm-rows > div').allTextContents()
      return rows.map((row) => row.replaceAll('\u00a0', ' ').trimEnd()).join('\n')
    }

    it('plays a recording in xterm.js and seeks to a send from the timeline of send markers', async () => {
      const page = await browser.newPage({ viewport: { width: 1200, height: 560 } })
      const failures: string[] = []
      page.on('pageerror', (error) => failures.push(error.message))
      try {
        await page.goto(url.href)
        await page.locator('#player-link').click()
        await page.locator('#recordings li').first().click()
        const marks = page.locator('#timeline .mark')
        await eventually(async () => (await marks.count()) === 4, 'four send markers on the timeline')
        expect(await marks.nth(3).getAttribute('title')).toMatch(/^send 4 \(call mcp-4\): stdin_read, exit 2 at \d+:\d\d\.\d$/)

        // Seek to send 3: what sends 1 and 2 printed is drawn, nothing of send 3 yet.
        await marks.nth(2).click()
        await eventually(async () => (await screenText(page)).includes('gamma'), 'the output before send 3')
        expect(await screenText(page)).not.toContain('101')
        expect(await marks.nth(1).getAttribute('class')).toContain('passed')
        expect(await marks.nth(2).getAttribute('class')).not.toContain('passed')

        // Play on at 8×: the rest arrives, to the end.
        await page.locator('#speed').selectOption('8')
        await page.locator('#play').click()
        await eventually(async () => (await page.locator('#status').textContent()) === 'end of the recording', 'the end of the recording')
        const shown = await screenText(page)
        expect(shown).toContain('103')
        expect(shown).toContain('nonexistent-dir')

        await marks.nth(3).click()
        await eventually(async () => (await screenText(page)).includes('103'), 'the output before send 4')
        const screenshot = process.env.UPDATE_PLAYER_SCREENSHOT ? README_SCREENSHOT : join(scratch.dir, 'player.png')
        await page.screenshot({ path: screenshot })
        expect((await stat(screenshot)).size).toBeGreaterThan(10_000)
        expect(failures).toEqual([])
      } finally {
        await page.close()
      }
    })
  })
})
