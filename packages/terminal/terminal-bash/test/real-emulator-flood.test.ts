import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TerminalSendResult, TerminalSessionId } from 'dsh-terminal'
import { eventually } from 'dsh-testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStack, type Stack } from './support/stack'

// A real bash prints what used to freeze the host (each of these sequences alone took 20–30 s of
// the one event loop every session shares). The flood runs until the test stops it, and the test
// stops it only after another session's sends, the registry's listing and the flooding session's
// own screen read have all answered meanwhile: without the guard none of them could.
let stack: Stack
let flooding: TerminalSessionId
let other: TerminalSessionId
const work = mkdtempSync(join(tmpdir(), 'dsh-emulator-flood-'))

beforeAll(async () => {
  stack = await startStack()
  flooding = (await stack.open({ cwd: work, name: 'flooding' })).sessionId
  other = (await stack.open({ cwd: work, name: 'other' })).sessionId
})

afterAll(async () => {
  await stack.dispose()
  rmSync(work, { recursive: true, force: true })
})

/**
 * Start `command` in the flooding session (it must create `started` once printing, and keep
 * printing until `stop` exists), then, while it runs: sends of `true` in the other session, the
 * registry's list and the flooding session's screen. Returns the flood's result once stopped.
 */
async function answeredDuringFlood(name: string, command: string): Promise<{ flood: TerminalSendResult; answers: string[] }> {
  const started = join(work, `${name}.started`)
  const stop = join(work, `${name}.stop`)
  const handle = stack.send(flooding, command.replaceAll('STARTED', started).replaceAll('STOP', stop), { timeoutMs: 120_000 })
  let floodSettled = false
  const flood = handle.done.then((result) => {
    floodSettled = true
    return result
  })
  await eventually(() => existsSync(started), `${name} to start printing`, 30_000)
  const answers: string[] = []
  for (let round = 0; round < 3; round++) {
    const sent = await stack.run(other, 'true')
    answers.push(`send ${sent.waitReason} ${sent.exitCode} during=${!floodSettled}`)
    answers.push(`list ${stack.terminals.list(stack.agent).length} during=${!floodSettled}`)
    const screen = await stack.terminals.screen(stack.agent, flooding)
    answers.push(`screen ${screen?.size.rows}x${screen?.size.cols} during=${!floodSettled}`)
  }
  writeFileSync(stop, '')
  const result = await flood
  await handle.released
  return { flood: result, answers }
}

const EVERY_ANSWER = Array.from({ length: 3 }, () => ['send stdin_read 0 during=true', 'list 2 during=true', 'screen 40x160 during=true']).flat()

describe('output that makes the emulator work', () => {
  it('huge repeat counts (IL, DL, REP, CHT, CBT, SU) leave every other call answering', async () => {
    const attack = String.raw`\e[9999999L\e[999999999b\e[9999999M\e[999999999I\e[999999999Z\e[9999999S`
    const { flood, answers } = await answeredDuringFlood(
      'counts',
      `printf 'x${attack}'; touch STARTED; while [ ! -e STOP ]; do printf 'x${attack}'; done; echo; echo flood-done`,
    )
    expect(answers).toEqual(EVERY_ANSWER)
    expect(flood).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
    const screen = await stack.terminals.screen(stack.agent, flooding)
    expect(screen?.lines).toContain('flood-done')
  })

  it('a 50 MB OSC 52, a 2 MB title and a huge DCS never reach the emulator, and memory stays bounded', async () => {
    const counted = join(work, 'megabytes')
    // Sampled during the flood: maxRSS would count peaks of earlier test files in this worker.
    const before = process.memoryUsage().rss
    let peak = before
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss)
    }, 20)
    // A title that fits; at least 50 MB of clipboard payload, more until the test stops it; a 2 MB
    // title (xterm itself would take up to 10 MB); then 10 MB of sixel data.
    const { flood, answers } = await answeredDuringFlood(
      'strings',
      `printf '\\e]2;small\\a'; n=0; printf '\\e]52;c;'; touch STARTED; while [ $n -lt 50 ] || [ ! -e STOP ]; do head -c 1000000 /dev/zero | tr '\\0' A; n=$((n+1)); done; printf '\\a'; echo $n > ${counted}; ` +
        `printf '\\e]2;'; head -c 2000000 /dev/zero | tr '\\0' T; printf '\\a'; ` +
        `printf '\\eP0;1q'; head -c 10000000 /dev/zero | tr '\\0' '#'; printf '\\e\\\\'; echo strings-done`,
    )
    clearInterval(sampler)
    const payload = (Number(readFileSync(counted, 'utf8')) + 12) * 1_000_000
    const peakGrowth = peak - before
    expect(answers).toEqual(EVERY_ANSWER)
    expect(flood).toMatchObject({ waitReason: 'stdin_read', exitCode: 0 })
    const screen = await stack.terminals.screen(stack.agent, flooding)
    expect(screen?.lines).toContain('strings-done')
    expect(screen?.lines.join('\n')).not.toContain('AAAA')
    // (Its first characters only: a failure must not print 2 MB.)
    expect({ title: screen?.title?.slice(0, 20), length: screen?.title?.length }).toEqual({ title: 'small', length: 5 })
    // Unguarded, the emulator kept the string: 3.9 GiB for 50 MB (80× the payload). Now the host holds
    // a bounded window of it; the bound leaves room for the garbage collector's timing.
    expect(peakGrowth / payload).toBeLessThan(1)
  })
})
