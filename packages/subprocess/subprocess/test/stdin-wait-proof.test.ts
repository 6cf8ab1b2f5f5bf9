import { describe, expect, it } from 'vitest'
import { canProveStdinWait, isStdinWaitProven, isStdinWaitProvenOrUnprovable, isStdinWaitUnproven, type StdinWaitProof } from 'dsh-subprocess'

function answers(stdinWaitProof: StdinWaitProof): boolean[] {
  const facts = { stdinWaitProof }
  return [isStdinWaitProven(facts), isStdinWaitUnproven(facts), canProveStdinWait(facts), isStdinWaitProvenOrUnprovable(facts)]
}

describe('stdin wait proof predicates', () => {
  it('a proven wait: proven, provable, waiting as far as known', () => {
    expect(answers('proven')).toEqual([true, false, true, true])
  })

  it('none proven where it could be: unproven, provable, not waiting', () => {
    expect(answers('unproven')).toEqual([false, true, true, false])
  })

  it('a platform that cannot prove waits: nothing proven, and nothing ruled out', () => {
    expect(answers('unprovable')).toEqual([false, false, false, true])
  })
})
