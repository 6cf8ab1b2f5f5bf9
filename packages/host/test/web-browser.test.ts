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
})
