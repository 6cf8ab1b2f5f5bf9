import { encodeControl as encode } from '../../src/index'

/** The fields of `ForegroundFacts` these tests read from a reply's JSON. */
export interface ForegroundFactsLike {
  readonly stdinWaitProof: string
  readonly isShellGroup: boolean
  readonly processGroupId: number
}

/** `encodeControl` for hand-built (possibly wrong) messages. */
export function encodeControl(message: { type: string; [field: string]: unknown }): Buffer {
  return encode(message)
}
