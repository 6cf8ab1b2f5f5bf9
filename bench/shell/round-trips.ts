// `true` and `echo` round trips and the CPU a `true` send costs this process, for the unconfined
// stack and the confined one (the default composition's sandbox) beside the raw floor. The three take
// turns sample by sample (the order rotated every round), so drift in the host's load hits all alike.
import { collectRotating, cpuPerCall, STEADY_WARMUP_SENDS, timed } from '../lib/measure'
import { RawShell } from '../lib/raw-shell'
import { exact, type Stack } from '../lib/shell-stack'
import type { TerminalSessionId } from '../../packages/terminal/terminal/src/index'
import { runChild } from '../lib/child'
import type { BenchRow } from '../lib/types'
import { type ShellStacks, whenWanted } from './group'

const TRUE_FLOOR = 'raw: `true` round trip'
const TRUE = 'shell: `true` round trip'
const TRUE_CONFINED = 'shell: `true` round trip, confined (workspace-write)'
const IDLE_LOOK = 'shell: inputState(), idle at the prompt'
const ECHO_FLOOR = 'raw: `echo` round trip'
const ECHO = 'shell: `echo` round trip'
const ECHO_CONFINED = 'shell: `echo` round trip, confined (workspace-write)'
const CPU_FLOOR = 'raw: CPU per `true` send'
const CPU = 'shell: CPU per `true` send'
const CPU_CONFINED = 'shell: CPU per `true` send, confined (workspace-write)'
/** Sends per CPU sample: process.cpuUsage counts whole microseconds, so one send is too short to read. */
const SENDS_PER_CPU_SAMPLE = 50
/** Sends a cold child makes, and child processes per side (the sides take turns). */
const COLD_SENDS = 200
const COLD_ROUNDS = 3
const COLD_CPU_FLOOR = 'raw: CPU per `true` send, first 200 of a fresh process'
const COLD_CPU = 'shell: CPU per `true` send, first 200 of a fresh process'
const COLD_TRIP_FLOOR = 'raw: `true` round trip, first 200 of a fresh process'
const COLD_TRIP = 'shell: `true` round trip, first 200 of a fresh process'

/** A raw floor shell, an unconfined and a confined session, each closed after `measure`. */
async function withShells<T>(
  { stack, confined }: ShellStacks,
  measure: (raw: RawShell, ours: TerminalSessionId, theirs: TerminalSessionId) => Promise<T>,
): Promise<T> {
  const raw = await RawShell.open()
  const ours = await stack.open()
  const theirs = await confined.open()
  try {
    return await measure(raw, ours, theirs)
  } finally {
    await raw.close()
    await stack.close(ours)
    await confined.close(theirs)
  }
}

/** One `true` send, checked: it must settle on the marker telling the prompt, with no inspection. */
async function trueSend(stack: Stack, id: TerminalSessionId): Promise<void> {
  exact(await stack.run(id, 'true'), 'dsh> ', '`true`', 'prompt')
}

/** `true` round trips (with a fresh input-state look after each unconfined send) and `echo` round trips. */
export const roundTripRows = whenWanted([TRUE_FLOOR, TRUE, TRUE_CONFINED, IDLE_LOOK, ECHO_FLOOR, ECHO, ECHO_CONFINED], (stacks) =>
  withShells(stacks, async (raw, ours, theirs) => {
    const { stack, confined } = stacks
    // After each unconfined send, a fresh look at the input state, timed apart from the round trip:
    // the shell is known idle at the prompt the send ended on, so it needs no inspection.
    const idleLooks: number[] = []
    const [trueFloor, trueOurs, trueConfined] = await collectRotating(
      300,
      [
        async () => (await timed(() => raw.run('true'))) * 1000,
        async () => {
          const start = performance.now()
          const result = await stack.run(ours, 'true')
          const sent = performance.now()
          const state = await stack.inputState(ours)
          idleLooks.push((performance.now() - sent) * 1000)
          exact(result, 'dsh> ', '`true`', 'prompt')
          if (state?.kind !== 'prompt') throw new Error(`bench: inputState at the idle prompt: ${JSON.stringify(state)}`)
          return (sent - start) * 1000
        },
        async () => (await timed(() => trueSend(confined, theirs))) * 1000,
      ],
      STEADY_WARMUP_SENDS,
    )
    const echo = (on: Stack, id: TerminalSessionId) => async () =>
      (await timed(async () => exact(await on.run(id, 'echo bench-echo'), 'bench-echo\n', '`echo`'))) * 1000
    const [echoFloor, echoOurs, echoConfined] = await collectRotating(
      200,
      [async () => (await timed(() => raw.run('echo bench-echo'))) * 1000, echo(stack, ours), echo(confined, theirs)],
      // The same path as `true`, warmed by the rows above.
      20,
    )
    return [
      { figure: TRUE_FLOOR, unit: 'µs', samples: trueFloor! },
      {
        figure: TRUE,
        unit: 'µs',
        floor: TRUE_FLOOR,
        note: `steady state (${STEADY_WARMUP_SENDS} sends each first); the result tells the input (prompt) from the marker: no inspection`,
        samples: trueOurs!,
      },
      {
        figure: TRUE_CONFINED,
        unit: 'µs',
        floor: TRUE_FLOOR,
        note: 'bash inside bubblewrap (the default composition); the raw floor is unconfined',
        samples: trueConfined!,
      },
      {
        figure: IDLE_LOOK,
        unit: 'µs',
        floor: TRUE_FLOOR,
        note: 'one after each unconfined `true` send above (the warm-up ones dropped); a raw client knows this for free from the marker it read, so the floor is the raw `true` round trip and the ratio is the share of a round trip one fresh look costs',
        samples: idleLooks.slice(-trueOurs!.length),
      },
      { figure: ECHO_FLOOR, unit: 'µs', samples: echoFloor! },
      { figure: ECHO, unit: 'µs', floor: ECHO_FLOOR, samples: echoOurs! },
      { figure: ECHO_CONFINED, unit: 'µs', floor: ECHO_FLOOR, samples: echoConfined! },
    ]
  }),
)

/** This process's CPU time per `true` send (user + system, over blocks of sends), ours and the floor's. */
export const cpuRows = whenWanted([CPU_FLOOR, CPU, CPU_CONFINED], (stacks) =>
  withShells(stacks, async (raw, ours, theirs) => {
    const [floor, mine, confined] = await collectRotating(
      30,
      [
        cpuPerCall(SENDS_PER_CPU_SAMPLE, () => raw.run('true')),
        cpuPerCall(SENDS_PER_CPU_SAMPLE, () => trueSend(stacks.stack, ours)),
        cpuPerCall(SENDS_PER_CPU_SAMPLE, () => trueSend(stacks.confined, theirs)),
      ],
      STEADY_WARMUP_SENDS / SENDS_PER_CPU_SAMPLE,
    )
    const note = `steady state (${STEADY_WARMUP_SENDS} sends each first); process.cpuUsage (user + system) over ${SENDS_PER_CPU_SAMPLE} sends per sample, divided by ${SENDS_PER_CPU_SAMPLE}; the three take turns block by block. The shell's own CPU (bash) is not counted: it is the same on both sides`
    return [
      { figure: CPU_FLOOR, unit: 'µs', samples: floor! },
      { figure: CPU, unit: 'µs', floor: CPU_FLOOR, note, samples: mine! },
      { figure: CPU_CONFINED, unit: 'µs', floor: CPU_FLOOR, note: 'as above, bash inside bubblewrap', samples: confined! },
    ]
  }),
)

interface ColdChild {
  cpuPerSend: number
  roundTrip: number
}

/** The first sends of a fresh process (bench/children/cold-sends.ts), ours and the raw floor's, each side in child processes of its own. */
export const coldRows = whenWanted([COLD_CPU_FLOOR, COLD_CPU, COLD_TRIP_FLOOR, COLD_TRIP], async (): Promise<BenchRow[]> => {
  const sides = { raw: [] as ColdChild[], shell: [] as ColdChild[] }
  for (let round = 0; round < COLD_ROUNDS; round++) {
    for (const side of ['raw', 'shell'] as const) sides[side].push(await runChild<ColdChild>('cold-sends', [side, String(COLD_SENDS)]))
  }
  const note = `${COLD_SENDS} sends right after the first open of a fresh process (${COLD_ROUNDS} processes per side): the JIT has not optimized the path yet`
  return [
    { figure: COLD_CPU_FLOOR, unit: 'µs', samples: sides.raw.map((child) => child.cpuPerSend) },
    { figure: COLD_CPU, unit: 'µs', floor: COLD_CPU_FLOOR, note, samples: sides.shell.map((child) => child.cpuPerSend) },
    { figure: COLD_TRIP_FLOOR, unit: 'µs', samples: sides.raw.map((child) => child.roundTrip) },
    {
      figure: COLD_TRIP,
      unit: 'µs',
      floor: COLD_TRIP_FLOOR,
      note: 'the median round trip of those sends',
      samples: sides.shell.map((child) => child.roundTrip),
    },
  ]
})
