import { Buffer } from 'node:buffer'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { installed } from 'dsh-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { EmulatorGuard } from '../src/screen/emulator-guard'
import { CSI_RULES } from '../src/screen/emulator-rules'
import { emulator, type Rendered, renderAfter } from './support/emulator'

// The guard must not change what ordinary programs draw: their output is fed chunk by chunk to an
// emulator directly and to one behind the guard, and the screens are compared after every chunk.
for (const program of ['vim', 'less', 'script']) {
  if (!installed(program) && process.env.CI) throw new Error(`${program} must be installed on CI: the guard's fidelity is shown on its output`)
}
const work = mkdtempSync(join(tmpdir(), 'dsh-guard-fidelity-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

/**
 * The output of `command` run in a 24 × 80 xterm-256color PTY (util-linux `script`), keys from `keys`
 * on its stdin. Its exit status is not ours to judge (vim exits 1 after a beep), its output is.
 */
function record(command: string, keys = ''): Buffer {
  const run = spawnSync('script', ['-qfc', `stty rows 24 cols 80; ${command}`, '/dev/null'], {
    input: keys,
    env: { ...process.env, TERM: 'xterm-256color' },
    maxBuffer: 64 * 1024 * 1024,
  })
  if (run.error) throw run.error
  return run.stdout
}

/** Screens after each `chunkSize`-byte chunk, unguarded and guarded; they must be equal at every step. */
async function compareChunked(output: Uint8Array, size: { rows: number; cols: number }, chunkSize: number): Promise<{ steps: number; last: Rendered }> {
  const direct = emulator(size)
  const behind = emulator(size)
  const guard = new EmulatorGuard(size)
  let last: Rendered | undefined
  let steps = 0
  try {
    for (let from = 0; from < output.length; from += chunkSize) {
      const chunk = output.subarray(from, from + chunkSize)
      const pieces: Uint8Array[] = []
      guard.write(chunk, (piece) => pieces.push(Buffer.from(piece)))
      const expected = await renderAfter(direct, [chunk])
      expect(await renderAfter(behind, pieces)).toEqual(expected)
      last = expected
      steps += 1
    }
  } finally {
    direct.dispose()
    behind.dispose()
  }
  return { steps, last: last as Rendered }
}

describe.skipIf(!installed('vim') || !installed('script'))('vim', () => {
  it('draws the same screens behind the guard (scrolling with regions, splits, redraws)', async () => {
    const file = join(work, 'lines.txt')
    writeFileSync(file, Array.from({ length: 300 }, (_, index) => `line number ${index + 1} ${'\u00e9\u6f22'.repeat(index % 3)}`).join('\n'))
    // (vim takes at most 10 -c commands.)
    const scroll = (keys: string) => `-c 'exe "normal! ${keys}" | redraw'`
    const output = record(
      `vim -u NONE -i NONE -N -c 'set nu | redraw' ${scroll('5\\<C-e>')} ${scroll('\\<C-e>')} ${scroll('3\\<C-y>')} -c 'split | redraw' ${scroll('\\<C-d>')} -c 'vsplit | redraw' ${scroll('2\\<C-y>')} -c 'qa!' ${file}`,
    )
    expect(output.toString('latin1')).toContain('\x1b[?1049h')
    expect(output.toString('latin1')).toContain('\x1b[?1049l')
    // It scrolls with a region and inserted or deleted rows: the sequences the guard clamps.
    expect(output.toString('latin1')).toMatch(/\x1b\[1;\d+r[\s\S]*\x1b\[\d+[LM]/)
    for (const chunkSize of [61, 1024]) {
      const { steps } = await compareChunked(output, { rows: 24, cols: 80 }, chunkSize)
      expect(steps).toBeGreaterThan(1)
    }
  })
})

describe.skipIf(!installed('less') || !installed('script'))('less', () => {
  it('draws the same screens behind the guard (paging forward and back)', async () => {
    const file = join(work, 'pager.txt')
    writeFileSync(file, Array.from({ length: 400 }, (_, index) => `row ${index + 1}: ${'lorem ipsum '.repeat(1 + (index % 9))}`).join('\n'))
    const output = record(`less ${file}`, 'jjjjjkkk bbG/row 7\ngggq')
    expect(output.toString('latin1')).toContain('row 1:')
    const { last } = await compareChunked(output, { rows: 24, cols: 80 }, 97)
    expect(last.lines.length).toBe(24)
  })
})

describe('streams mixing text and clamped sequences', () => {
  it('render as xterm renders them unguarded, for any count and any chunking', async () => {
    const size = { rows: 5, cols: 9 }
    const rules = CSI_RULES.filter((rule) => rule.limits.length > 0)
    const item = fc.oneof(
      fc.string({ unit: fc.constantFrom(...'abc xyz'.split('')), minLength: 1, maxLength: 14 }),
      fc.constantFrom(
        '\r\n',
        '\n',
        '\r',
        '\b',
        '\t',
        '\x1b[1;31m',
        '\x1b[m',
        '\x1b7',
        '\x1b8',
        '\x1bM',
        '\x1b[?7l',
        '\x1b[?7h',
        '\x1b[4h',
        '\x1b[4l',
        '\x1b[?6h',
        '\x1b[?6l',
      ),
      fc
        .tuple(fc.constantFrom(...rules), fc.integer({ min: 0, max: 120 }), fc.integer({ min: 0, max: 120 }))
        .map(([rule, first, second]) => `\x1b[${first};${second}${rule.intermediates}${rule.final}`),
    )
    await fc.assert(
      fc.asyncProperty(fc.array(item, { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 17 }), async (items, chunkSize) => {
        await compareChunked(Buffer.from(items.join(''), 'latin1'), size, chunkSize)
      }),
      { numRuns: 200 },
    )
  })
})
