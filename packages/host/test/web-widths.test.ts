import { existsSync } from 'node:fs'
import { eventually } from 'dsh-testkit'
import { type Browser, chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startWebFixture, type WebFixture } from './web-fixture'

/** Debian's chromium (apt-get install chromium); playwright-core downloads no browser here. */
const CHROMIUM = '/usr/bin/chromium'
const HAVE_CHROMIUM = existsSync(CHROMIUM)

// The page's xterm.js draws with the widths the session's emulator and bash use (Unicode 11), so
// what a person sees lines up with what the agent's screen shows: emoji take two columns.
let fx: WebFixture
let browser: Browser
let sessionId: string

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return
  fx = await startWebFixture()
  const opened = await fx.call('terminal_open', { type: 'shell', name: 'widths' })
  sessionId = /pty-\d+/.exec(opened.text)![0]
  await fx.call('terminal_send', { sessionId, text: "printf '%s|\\n' 🚀⚡✅" })
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })
})

afterAll(async () => {
  await browser?.close()
  await fx?.dispose()
})

describe.skipIf(!HAVE_CHROMIUM)(`web view widths in a real browser (needs ${CHROMIUM})`, () => {
  it('serves the Unicode 11 addon and draws 🚀⚡✅ six columns wide', async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 620 } })
    const failures: string[] = []
    page.on('pageerror', (error) => failures.push(error.message))
    page.on('requestfailed', (request) => failures.push(`${request.url()} failed`))
    try {
      await page.goto(fx.web.url)
      await page.locator('#sessions li', { hasText: sessionId }).click()
      // The column of `|` on the row the printf wrote, read from the page's own terminal.
      const bar = () =>
        page.evaluate(() => {
          const buffer = terminal.buffer.active
          for (let row = 0; row < buffer.length; row++) {
            const line = buffer.getLine(row)
            if (line?.translateToString(true) === '🚀⚡✅|') return line.translateToString(true, 0, 6) === '🚀⚡✅' ? 6 : -1
          }
          return undefined
        })
      await eventually(async () => (await bar()) !== undefined, 'the printf output on the page')
      expect(await page.evaluate(() => terminal.unicode.activeVersion)).toBe('11')
      expect(await bar()).toBe(6)
      expect(failures).toEqual([])
    } finally {
      await page.close()
    }
  })
})

/** The page's xterm.js terminal (a global of its inline script). */
declare const terminal: {
  unicode: { activeVersion: string }
  buffer: { active: { length: number; getLine(row: number): { translateToString(trim?: boolean, start?: number, end?: number): string } | undefined } }
}
