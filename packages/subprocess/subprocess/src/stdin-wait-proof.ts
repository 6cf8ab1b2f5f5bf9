import type { ForegroundFacts } from './types'

/** The facts' one view of a stdin wait; the predicates below read nothing else. */
type ProofFacts = Pick<ForegroundFacts, 'stdinWaitProof'>

/** Some thread of the group in front is proven blocked reading the terminal. */
export function isStdinWaitProven(facts: ProofFacts): boolean {
  return facts.stdinWaitProof === 'proven'
}

/** The platform can prove stdin waits but this sample proved none: the group is busy, or about to block. */
export function isStdinWaitUnproven(facts: ProofFacts): boolean {
  return facts.stdinWaitProof === 'unproven'
}

/** The platform can prove stdin waits at all (not macOS, not an unsupported CPU), whatever this sample found. */
export function canProveStdinWait(facts: ProofFacts): boolean {
  return facts.stdinWaitProof !== 'unprovable'
}

/**
 * Waiting as far as the platform can tell: proven blocked reading, or on a platform that can never
 * prove it (where only other evidence, e.g. a prompt on screen, can decide).
 */
export function isStdinWaitProvenOrUnprovable(facts: ProofFacts): boolean {
  return facts.stdinWaitProof !== 'unproven'
}
