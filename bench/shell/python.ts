// Python REPL rows: `1+1` at a marked REPL prompt, and `exit()` back to the shell's prompt (marked,
// unmarked, confined), each beside a raw floor whose `sys.ps1` carries the marker.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { collectInterleaved, collectRotating, STEADY_WARMUP_SENDS, timed } from '../lib/measure'
import { RawShell } from '../lib/raw-shell'
import { exact, type Stack } from '../lib/shell-stack'
import type { TerminalSessionId } from '../../packages/terminal/terminal/src/index'
import { summarize } from '../lib/stats'
import type { BenchRow } from '../lib/types'
import { whenWanted } from './group'

const PYTHON = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim()
/**
 * The confined row's Python: the first `python3` on PATH outside the home directory, which a confined
 * session does not see (its home is private); a pyenv install under `~/.pyenv` is not there.
 */
const CONFINED_PYTHON = (() => {
  const home = homedir()
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir === '' || dir === home || dir.startsWith(`${home}/`)) continue
    const candidate = join(dir, 'python3')
    if (existsSync(candidate)) return candidate
  }
  throw new Error(`bench: no python3 on PATH outside ${home}, which a confined session cannot see`)
})()
/** The floor's REPL prompt: the marker, then `dsh> `. */
const PS1 = "import sys; sys.ps1 = '\\x1b]133;D;0\\x07dsh> '"
const ADD_FLOOR = 'raw: python `1+1` (marker in sys.ps1)'
const ADD = 'shell: python `1+1` (stdin_read)'
const EXIT_FLOOR = 'raw: python `exit()` → marker prompt'
const EXIT = 'shell: python `exit()` → prompt (stdin_read)'
const EXIT_UNMARKED = 'shell: python `exit()` → prompt, REPL unmarked'
const EXIT_CONFINED = 'shell: python `exit()` → prompt, confined session (workspace-write)'

/** `1+1` round trips and `exit()` to the prompt. */
export const pythonRows = whenWanted([ADD_FLOOR, ADD, EXIT_FLOOR, EXIT, EXIT_UNMARKED, EXIT_CONFINED], async ({ stack, confined }): Promise<BenchRow[]> => {
  const raw = await RawShell.open()
  const id = await stack.open()
  const confinedId = await confined.open()
  try {
    // The backend's unconfined shell marks the REPL's prompt itself (PYTHONSTARTUP, with its own
    // nonce), so a send at that prompt ends on the next marker.
    await raw.run(`${PYTHON} -q -i -c "${PS1}"`)
    await stack.run(id, `${PYTHON} -q`)
    const micros = (run: () => Promise<unknown>) => async () => (await timed(run)) * 1000
    const adds = await collectInterleaved(
      200,
      micros(() => raw.run('1+1')),
      micros(async () => exact(await stack.run(id, '1+1'), '2\n>>> ', 'python `1+1`', 'program')),
      STEADY_WARMUP_SENDS,
    )
    await raw.run('exit()')
    exact(await stack.run(id, 'exit()'), 'dsh> ', 'python `exit()`', 'prompt')

    // Each sample starts a fresh REPL (untimed), then times `exit()` until the bash marker prompt is
    // back. Without Python's marker (here `PYTHONSTARTUP=`) the send falls back to the stdin-wait
    // proof, and the shell's prompt after it may be one the shell owed from before: it counts once
    // it held still for pollIntervalMs. A confined session gets the marker too (the sandbox shows the
    // startup file, and the marker's pid is matched).
    const exitAfter = (start: string, on: Stack, session: TerminalSessionId) => async () => {
      exact(await on.run(session, start), '>>> ', start, 'program')
      const begin = performance.now()
      const result = await on.run(session, 'exit()')
      const elapsed = performance.now() - begin
      exact(result, 'dsh> ', `\`exit()\` after ${start}`, 'prompt')
      return elapsed
    }
    const [exitFloor, exitMarked, exitUnmarked, exitConfined] = await collectRotating(
      20,
      [
        async () => {
          await raw.run(`${PYTHON} -q -i -c "${PS1}"`)
          return timed(() => raw.run('exit()'))
        },
        exitAfter(`${PYTHON} -q`, stack, id),
        exitAfter(`PYTHONSTARTUP= ${PYTHON} -q`, stack, id),
        exitAfter(`${CONFINED_PYTHON} -q`, confined, confinedId),
      ],
      2,
    )
    const overFloor = (samples: readonly number[]) => `p50 over the floor ${(summarize(samples).p50 - summarize(exitFloor!).p50).toFixed(1)} ms`
    return [
      { figure: ADD_FLOOR, unit: 'µs', samples: adds.floor },
      {
        figure: ADD,
        unit: 'µs',
        floor: ADD_FLOOR,
        note: 'floor and backend alternate send by send; both Pythons see the host environment (see RAW_ENV)',
        samples: adds.contender,
      },
      { figure: EXIT_FLOOR, unit: 'ms', samples: exitFloor! },
      {
        figure: EXIT,
        unit: 'ms',
        floor: EXIT_FLOOR,
        note: `${overFloor(exitMarked!)}; the REPL's prompt marked (unconfined session); floor and both rows rotate per sample`,
        samples: exitMarked!,
      },
      {
        figure: EXIT_UNMARKED,
        unit: 'ms',
        floor: EXIT_FLOOR,
        note: `${overFloor(exitUnmarked!)}; \`PYTHONSTARTUP= python3 -q\`: the shell's prompt holds still for pollIntervalMs`,
        samples: exitUnmarked!,
      },
      {
        figure: EXIT_CONFINED,
        unit: 'ms',
        floor: EXIT_FLOOR,
        note: `${overFloor(exitConfined!)}; bubblewrap shows the marking startup file, the marker's pid is matched through NSpid${CONFINED_PYTHON === PYTHON ? '' : `; ${CONFINED_PYTHON}, not the floor's ${PYTHON} (under the home a confined session does not see): not the same program`}`,
        samples: exitConfined!,
      },
    ]
  } finally {
    await raw.close()
    await stack.close(id)
    await confined.close(confinedId)
  }
})
