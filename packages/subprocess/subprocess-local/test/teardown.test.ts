import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { children, eventually, isAlive } from 'dsh-testkit'
import { BASH, BASH_ENV, capture, mountRuntime, pidFrom, runForPids } from './helpers'

let env: Awaited<ReturnType<typeof mountRuntime>> | undefined
const strays: number[] = []

afterEach(async () => {
  await env?.close()
  env = undefined
  // A failing test must not leave its fixtures running.
  for (const pid of strays.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL')
})

async function shell(graceMs: number) {
  env = await mountRuntime()
  const handle = await env.spawn({ argv: BASH, env: BASH_ENV, graceMs })
  const out = capture(handle)
  await out.waitFor(/PROMPT\$ $/)
  return { handle, out }
}

function run(ctx: Awaited<ReturnType<typeof shell>>, command: string, names: string[]): Promise<number[]> {
  return runForPids(ctx, command, names, strays)
}

function field(pid: number, index: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[index])
}

describe.skipIf(process.platform !== 'linux')('terminate() on real process trees', () => {
  it('kills a TERM-ignoring child at once instead of waiting out the grace', async () => {
    // A grace far beyond the test's timeout: a terminate that waited it out fails the test.
    const graceMs = 600_000
    const ctx = await shell(graceMs)
    const [ignorer] = await run(ctx, `sh -c 'trap "" TERM; echo IGN=$$; exec sleep 600' &`, ['IGN'])
    await eventually(() => readFileSync(`/proc/${ignorer}/comm`, 'utf8').trim() === 'sleep', 'the exec')
    await ctx.handle.terminate()
    expect(isAlive(ignorer!)).toBe(false)
  })

  it('gives a TERM handler the grace, then kills it and what it forked meanwhile', async () => {
    const ctx = await shell(300)
    const script = `trap "echo caught; sleep 600 & echo LATE=\\$!" TERM; echo CATCH=$$; while :; do sleep 0.05; done`
    const [catcher] = await run(ctx, `sh -c '${script}' &`, ['CATCH'])
    await ctx.handle.terminate()
    expect(ctx.out.text()).toContain('caught')
    const late = await pidFrom(ctx.out, 'LATE')
    expect(isAlive(catcher!)).toBe(false)
    expect(isAlive(late)).toBe(false)
  })

  it('finds a child forked during TERM by a parent that then exits (orphaned, same session)', async () => {
    const ctx = await shell(5_000)
    const script = `trap "sleep 600 & echo FORKED=\\$!; exit 0" TERM; echo PARENT=$$; while :; do sleep 0.05; done`
    const [parent] = await run(ctx, `sh -c '${script}' &`, ['PARENT'])
    await ctx.handle.terminate()
    const forked = await pidFrom(ctx.out, 'FORKED')
    strays.push(forked)
    expect(isAlive(parent!)).toBe(false)
    expect(isAlive(forked)).toBe(false)
  })

  it('kills a disowned child and a double-forked orphan of the session', async () => {
    const ctx = await shell(5_000)
    const [disowned] = await run(ctx, 'sleep 600 & disown; echo DISOWNED=$!', ['DISOWNED'])
    const [orphan] = await run(ctx, '(sleep 601 & echo ORPHAN=$!)', ['ORPHAN'])
    await eventually(() => field(orphan!, 1) !== ctx.handle.pid && field(orphan!, 1) !== 0, 'the orphan to be reparented')
    await ctx.handle.terminate()
    expect(isAlive(disowned!)).toBe(false)
    expect(isAlive(orphan!)).toBe(false)
  })

  it('kills a setsid child that left the session but kept the terminal', async () => {
    const ctx = await shell(5_000)
    const [daemon] = await run(ctx, `setsid sh -c 'echo SETSID=$$; exec sleep 602' &`, ['SETSID'])
    await eventually(() => field(daemon!, 3) === daemon, 'its own session')
    expect(field(daemon!, 3)).not.toBe(ctx.handle.pid)
    await ctx.handle.terminate()
    expect(isAlive(daemon!)).toBe(false)
  })

  it('sweeps what the top-level shell forks from its own TERM trap while it exits', async () => {
    env = await mountRuntime()
    const script = `trap 'sleep 603 & echo TRAPKID=$!' TERM; echo READY; while :; do sleep 0.05; done`
    const handle = await env.spawn({ argv: ['sh', '-c', script], graceMs: 300 })
    const out = capture(handle)
    await out.waitFor(/READY/)
    await handle.terminate()
    const trapKid = await pidFrom(out, 'TRAPKID')
    strays.push(trapKid)
    expect(isAlive(trapKid)).toBe(false)
    expect(isAlive(handle.pid)).toBe(false)
    expect(handle.exit?.signal).toBe('SIGKILL')
  })

  it('closes a 20-process tree with a TERM-ignorer well inside the grace', async () => {
    // A grace far beyond the test's timeout: a terminate that waited it out fails the test.
    const graceMs = 600_000
    const ctx = await shell(graceMs)
    const command = `for i in $(seq 18); do sleep 700 & done; sh -c 'trap "" TERM; echo IGN=$$; exec sleep 700' & echo SPAWNED=1`
    await run(ctx, command, ['IGN', 'SPAWNED'])
    const tree = await eventually(() => {
      const kids = children(ctx.handle.pid)
      return kids.length >= 19 ? kids : undefined
    }, 'the tree')
    strays.push(...tree)
    await ctx.handle.terminate()
    expect(tree.filter(isAlive)).toEqual([])
  })
})
