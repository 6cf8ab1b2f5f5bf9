import { describe, expect, it } from 'vitest'
import { DarwinInspector } from '../src/internal'

const START = 'Thu Jul 16 10:00:00 2026'
const line = (pid: number, ppid: number, pgid: number, tpgid: number, stat = 'S', start = START, ucomm = '') =>
  `${String(pid).padStart(5)} ${String(ppid).padStart(5)} ${String(pgid).padStart(5)} ${String(tpgid).padStart(5)} ${stat.padEnd(4)} ${start} ${ucomm}`.trimEnd()

/** A fake `ps` answering `-A` with the whole table and `-p a,b` with the listed rows; the clock reads `now`. */
function fakePs(rows: string[], now = Date.parse(START)) {
  const calls: string[][] = []
  const answer = (_file: string, args: readonly string[]) => {
    calls.push([...args])
    const index = args.indexOf('-p')
    if (index < 0) return `${rows.join('\n')}\n`
    const wanted = new Set(args[index + 1]!.split(','))
    return rows.filter((row) => wanted.has(row.trim().split(/\s+/)[0]!)).join('\n')
  }
  return {
    calls,
    inspector: new DarwinInspector(
      async (file, args) => answer(file, args),
      answer,
      () => now,
    ),
  }
}

const SHELL = { pid: 100, started: START }

describe('DarwinInspector (injected ps output)', () => {
  const rows = [
    line(1, 0, 1, 0),
    line(100, 50, 100, 200, 'Ss'),
    line(200, 100, 200, 200, 'S+'),
    line(201, 200, 200, 200, 'S+'),
    line(202, 200, 200, 200, 'Z+'),
    line(300, 1, 300, 0, 'S', 'Thu Jul 16 09:00:00 2026'),
  ]

  it('reports the foreground group from tpgid, with no stdin proof, in one ps call', async () => {
    const { inspector, calls } = fakePs(rows)
    const remembered: number[] = []
    const facts = await inspector.foreground(SHELL, 3, (records) => remembered.push(...records.map((record) => record.pid)))
    expect(facts).toEqual({
      sequence: 3,
      processGroupId: 200,
      isShellGroup: false,
      stdinWaitProof: 'unprovable',
      complete: false,
      waits: [],
      threads: [],
    })
    expect(remembered).toEqual([201, 202, 200])
    expect(calls).toHaveLength(1)
  })

  it('walks members children first, counts zombies as gone and keeps reparented tracked processes', async () => {
    const { inspector } = fakePs([...rows, line(400, 1, 400, 0, 'S'), line(401, 400, 400, 0, 'S')])
    const scan = await inspector.members({
      shell: SHELL,
      tracked: [
        { pid: 400, started: START },
        { pid: 300, started: START },
      ],
      thorough: true,
    })
    expect(scan.members.map((record) => record.pid)).toEqual([201, 200, 401, 400])
    expect(inspector.membersSync({ shell: SHELL, tracked: [], thorough: true }).members.map((record) => record.pid)).toEqual([201, 200])
  })

  it('checks identity with lstart and treats zombies and missing pids as gone', async () => {
    const { inspector } = fakePs(rows)
    const alive = await inspector.alive([
      { pid: 200, started: START },
      { pid: 202, started: START },
      { pid: 300, started: START },
      { pid: 999, started: START },
    ])
    expect(alive).toEqual([{ pid: 200, started: START }])
    expect(inspector.aliveSync([{ pid: 201, started: START }])).toEqual([{ pid: 201, started: START }])
    expect(await inspector.record({ pid: 300, started: START })).toBeUndefined()
    expect(await inspector.identify(300)).toMatchObject({ pid: 300, started: 'Thu Jul 16 09:00:00 2026' })
    expect(await inspector.disposition()).toBeUndefined()
  })

  it('names the group leader with its accounting name and age from lstart, in the same ps call', async () => {
    const named = [
      line(100, 50, 100, 200, 'Ss', START, '-zsh'),
      line(200, 100, 200, 200, 'S+', START, 'Python'),
      line(201, 200, 200, 200, 'S+', START, 'sleep'),
    ]
    const { inspector, calls } = fakePs(named, Date.parse(START) + 90_000)
    const facts = await inspector.foreground(SHELL, 1, () => {})
    expect(facts!.program).toEqual({ pid: 200, started: START, role: 'leader', command: 'Python', elapsedMs: 90_000 })
    expect(facts!.terminalModes).toBeUndefined()
    expect(facts!.notReadingProven).toBeUndefined()
    expect(calls).toEqual([['-A', '-o', 'pid=,ppid=,pgid=,tpgid=,stat=,lstart=,ucomm=']])
    // The leader exited (zombie): the first live member stands in.
    const orphaned = fakePs([named[0]!, line(200, 100, 200, 200, 'Z+', START, 'Python'), named[2]!], Date.parse(START) + 1000).inspector
    expect((await orphaned.foreground(SHELL, 2, () => {}))!.program).toEqual({ pid: 201, started: START, role: 'member', command: 'sleep', elapsedMs: 1000 })
    // A listing without names (another ps) names no program.
    expect((await fakePs(rows).inspector.foreground(SHELL, 3, () => {}))!.program).toBeUndefined()
  })

  it('reports nothing once the shell is gone or recycled', async () => {
    const { inspector } = fakePs(rows.filter((row) => !row.includes(' 100 ') || !row.trim().startsWith('100')))
    expect(await inspector.foreground(SHELL, 1, () => {})).toBeUndefined()
    const recycled = fakePs([line(100, 1, 100, 100, 'Ss', 'Fri Jul 17 10:00:00 2026')]).inspector
    expect(await recycled.foreground(SHELL, 1, () => {})).toBeUndefined()
    expect((await recycled.members({ shell: SHELL, tracked: [], thorough: true })).members).toEqual([])
  })
})
