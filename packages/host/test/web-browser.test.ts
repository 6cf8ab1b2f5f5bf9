import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { eventually } from 'dsh-testkit'
import { type Browser, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startWebFixture, type WebFixture } from './web-fixture'

/** Debian's chromium (apt-get install chromium); playwright-core downloads no browser here. */
const CHROMIUM = '/usr/bin/chromium'
const HAVE_CHROMIUM = existsSync(CHROMIUM)
if (!HAVE_CHROMIUM) console.warn(`web-browser tests skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`)

/** `UPDATE_WEB_SCREENSHOT=1` refreshes the README's picture; otherwise the screenshot goes to a temp dir. */
const SCREENSHOT = process.env.UPDATE_WEB_SCREENSHOT
  ? fileURLToPath(new URL('../docs/web-view.png', import.meta.url))
  : join(tmpdir(), `dsh-web-view-${process.pid}.png`)

let fx: WebFixture
let browser: Browser
let sessionId: string

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return
  fx = await startWebFixture()
  const opened = await fx.call('terminal_open', { type: 'shell', name: 'build' })
  sessionId = /pty-\d+/.exec(opened.text)![0]
  await fx.call('terminal_send', { sessionId, text: 'echo hello-from-agent' })
  await fx.call('terminal_send', { sessionId, text: 'printf "%s\\n" one two three' })
  await fx.call('terminal_send', { sessionId, text: 'echo $((6 * 7))' })
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
})

afterAll(async () => {
  await browser?.close()
  await fx?.dispose()
})

/** The text xterm.js shows on the page: its DOM renderer's rows, one line each. */
async function screenText(page: Page): Promise<string> {
  const rows = await page.locator('#terminal .xterm-rows > div').allTextContents()
  return rows.map((row) => row.replaceAll('\u00a0', ' ').trimEnd()).join('\n')
}

describe.skipIf(!HAVE_CHROMIUM)(`web view in a real browser (needs ${CHROMIUM})`, () => {
  it('answers a wrong token with 401', async () => {
    const page = await browser.newPage()
    try {
      const response = await page.goto(fx.web.url.replace(/token=\w+/, `token=${'0'.repeat(64)}`))
      expect(response?.status()).toBe(401)
      expect(await page.locator('body').textContent()).toBe('unauthorized')
    } finally {
      await page.close()
    }
  })

  it('shows what the agent printed, then after "Take over" types into the shell the agent reads', async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 620 } })
    const failures: string[] = []
    page.on('pageerror', (error) => failures.push(error.message))
    page.on('requestfailed', (request) => failures.push(`${request.url()} failed`))
    try {
      await page.goto(fx.web.url)
      const item = page.locator('#sessions li', { hasText: sessionId })
      await item.waitFor()
      expect(await item.textContent()).toContain('build')
      await item.click()
      await eventually(async () => (await screenText(page)).includes('hello-from-agent'), 'the agent output on the page')
      expect(await screenText(page)).toContain('42')
      const button = page.locator('#takeover')
      await eventually(async () => (await button.isEnabled()) && (await button.textContent()) === 'Take over', 'the Take over button')

      // Read-only by default: keys typed before taking over go nowhere.
      await page.locator('#terminal').click()
      await page.keyboard.type('echo never-sent')
      await button.click()
      await eventually(async () => (await button.textContent()) === 'Release', 'the Release button')
      await page.keyboard.type('echo typed-in-browser')
      await page.keyboard.press('Enter')
      await eventually(async () => (await screenText(page)).match(/^typed-in-browser$/m), 'the typed command to run')
      expect(await screenText(page)).not.toContain('never-sent')

      const read = await eventually(async () => {
        const { text } = await fx.call('terminal_read', { sessionId })
        return text.includes('typed-in-browser') && text
      }, 'the agent to see the typed command')
      expect(read).toContain('echo typed-in-browser')

      await eventually(
        async () => (await page.locator('#sessions li', { hasText: sessionId }).textContent())?.includes('person typing'),
        'the list to show the person typing',
      )
      await mkdir(join(SCREENSHOT, '..'), { recursive: true })
      await page.screenshot({ path: SCREENSHOT })

      await button.click()
      await eventually(async () => (await button.textContent()) === 'Take over', 'the role to be released')
      expect(failures).toEqual([])
    } finally {
      await page.close()
    }
  })
  it('says what to do before a session is picked, instead of an empty black box', async () => {
    const empty = await startWebFixture()
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    try {
      await page.goto(empty.web.url)
      const placeholder = page.locator('#placeholder')
      await eventually(async () => (await placeholder.textContent())?.startsWith('No sessions yet.'), 'the placeholder for no sessions')
      expect(await placeholder.textContent()).toContain('(terminal_open), it appears on the left; pick it to watch it here')
      expect(await page.locator('#terminal').isVisible()).toBe(false)

      await empty.call('terminal_open', { type: 'shell', name: 'later' })
      await eventually(
        async () => (await placeholder.textContent())?.startsWith('Pick a session on the left to watch it here.'),
        'the placeholder to point at the list',
      )
      expect(await page.locator('#terminal').isVisible()).toBe(false)
      await page.locator('#sessions li', { hasText: 'later' }).click()
      await eventually(async () => (await screenText(page)).includes('dsh>'), 'the prompt on the page')
      expect(await placeholder.isVisible()).toBe(false)
    } finally {
      await page.close()
      await empty.dispose()
    }
  })

  it('fits the whole session width beside the list, with no horizontal scrollbar, from 1280 down to 1024 px', async () => {
    const { sessions } = (await (await fetch(`${fx.origin}/sessions?token=${fx.token}`)).json()) as { sessions: { size?: { cols: number } }[] }
    expect(sessions[0]!.size!.cols).toBeGreaterThanOrEqual(160) // wider than the room at these widths with the default font
    for (const width of [1280, 1024]) {
      const page = await browser.newPage({ viewport: { width, height: 800 } })
      try {
        await page.goto(fx.web.url)
        expect(await horizontalOverflow(page)).toEqual([])
        await page.locator('#sessions li', { hasText: sessionId }).click()
        await eventually(async () => (await screenText(page)).includes('hello-from-agent'), 'the agent output on the page')
        expect({ width, overflow: await horizontalOverflow(page) }).toEqual({ width, overflow: [] })
      } finally {
        await page.close()
      }
    }
  })

  it("lists who watches and who took over in the words a second page's refused take over uses", async () => {
    const writer = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    const watcher = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    try {
      for (const page of [writer, watcher]) {
        await page.goto(fx.web.url)
        await page.locator('#sessions li', { hasText: sessionId }).click()
        await eventually(
          async () => (await page.locator('#takeover').isEnabled()) && (await page.locator('#takeover').textContent()) === 'Take over',
          'the Take over button',
        )
      }
      const entry = watcher.locator('#sessions li', { hasText: sessionId })
      await eventually(async () => (await entry.textContent())?.includes('2 people watching'), 'the list to count two people')
      await writer.locator('#takeover').click()
      await eventually(async () => (await writer.locator('#takeover').textContent()) === 'Release', 'the writer to take over')
      await eventually(async () => (await entry.textContent())?.includes('1 person took over (not typing now), 1 watching'), 'the list to show the idle writer')
      await watcher.locator('#takeover').click()
      await eventually(async () => (await watcher.locator('#status').textContent())?.startsWith('another person took over'), 'the refusal on the second page')
      expect(await watcher.locator('#status').textContent()).toContain('from the web view in a browser (not typing right now)')
    } finally {
      await writer.close()
      await watcher.close()
    }
  })
})

/** Every element of `page` (the page itself first) whose content is wider than its box: each one shows a horizontal scrollbar or cuts text. */
async function horizontalOverflow(page: Page): Promise<string[]> {
  return await page.evaluate(() => {
    const wide: string[] = []
    if (document.documentElement.scrollWidth > innerWidth) wide.push(`page ${document.documentElement.scrollWidth} > ${innerWidth}`)
    for (const element of Array.from(document.querySelectorAll<HTMLElement>('body *'))) {
      const overflowX = getComputedStyle(element).overflowX
      if ((overflowX === 'auto' || overflowX === 'scroll') && element.scrollWidth > element.clientWidth) {
        wide.push(`${element.tagName.toLowerCase()}#${element.id}.${element.className} ${element.scrollWidth} > ${element.clientWidth}`)
      }
    }
    return wide
  })
}
