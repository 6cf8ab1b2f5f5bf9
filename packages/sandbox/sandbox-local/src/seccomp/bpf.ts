/**
 * Classic BPF as seccomp reads it: `struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; }`, 8 bytes
 * each, in the host's byte order (little-endian on every architecture we support).
 */

/** One instruction; jumps count instructions to skip after this one. */
export interface Instruction {
  readonly code: number
  readonly jumpIfTrue: number
  readonly jumpIfFalse: number
  readonly k: number
}

/** The kernel refuses longer programs (BPF_MAXINSNS). */
export const MAX_INSTRUCTIONS = 4096
/** Size of one encoded `struct sock_filter`. */
export const INSTRUCTION_BYTES = 8

/** Opcodes used here: class | size/operation | source, as in linux/bpf_common.h. */
export const OPCODE = {
  /** BPF_LD (0x00) | BPF_W (0x00) | BPF_ABS (0x20): load the 32-bit word at offset k of seccomp_data. */
  loadWord: 0x20,
  /** BPF_JMP (0x05) | BPF_JEQ (0x10) | BPF_K (0x00) */
  jumpIfEqual: 0x15,
  /** BPF_JMP (0x05) | BPF_JGE (0x30) | BPF_K (0x00), unsigned */
  jumpIfAtLeast: 0x35,
  /** BPF_JMP (0x05) | BPF_JSET (0x40) | BPF_K (0x00): taken when (A & k) != 0 */
  jumpIfAnyBit: 0x45,
  /** BPF_RET (0x06) | BPF_K (0x00) */
  return: 0x06,
} as const

/** The instruction class (the low 3 bits of the opcode) of jumps, BPF_JMP. */
const JUMP_CLASS = 0x05

/** Filter results (SECCOMP_RET_*); ERRNO carries the errno in its low 16 bits. */
export const RESULT = {
  killProcess: 0x80000000,
  errno: 0x00050000,
  allow: 0x7fff0000,
} as const

/** Offsets in `struct seccomp_data { int nr; u32 arch; u64 instruction_pointer; u64 args[6]; }`. */
export const SECCOMP_DATA = {
  syscallNumber: 0,
  architecture: 4,
  /** The low 32 bits of argument `index` (little-endian: the first word of the u64). */
  argumentLow: (index: number): number => 16 + 8 * index,
} as const

/** Load a 32-bit word of seccomp_data into the accumulator. */
export function load(offset: number): Instruction {
  return { code: OPCODE.loadWord, jumpIfTrue: 0, jumpIfFalse: 0, k: offset }
}

/** Compare the accumulator with k and skip `ifTrue` or `ifFalse` instructions. */
export function jump(code: number, k: number, ifTrue: number, ifFalse: number): Instruction {
  return { code, jumpIfTrue: ifTrue, jumpIfFalse: ifFalse, k }
}

/** End the program with a filter result. */
export function returnWith(result: number): Instruction {
  return { code: OPCODE.return, jumpIfTrue: 0, jumpIfFalse: 0, k: result }
}

/** The ERRNO result for an errno value. */
export function errnoResult(errno: number): number {
  return RESULT.errno | (errno & 0xffff)
}

/**
 * Encode a program as the bytes `--seccomp` reads. Checks every field's range, the kernel's
 * length limit, and that no jump leaves the program, so a wrong program fails here, not in bwrap.
 */
export function encode(program: readonly Instruction[]): Buffer {
  if (program.length === 0 || program.length > MAX_INSTRUCTIONS) {
    throw new RangeError(`a seccomp program has 1 to ${MAX_INSTRUCTIONS} instructions, not ${program.length}`)
  }
  const bytes = Buffer.alloc(program.length * INSTRUCTION_BYTES)
  program.forEach((instruction, index) => {
    const { code, jumpIfTrue, jumpIfFalse, k } = instruction
    if (!isInteger(code, 0xffff) || !isInteger(jumpIfTrue, 0xff) || !isInteger(jumpIfFalse, 0xff) || !isInteger(k, 0xffffffff)) {
      throw new RangeError(`instruction ${index} has a field out of range: ${JSON.stringify(instruction)}`)
    }
    if ((code & 0x07) === JUMP_CLASS && index + 1 + Math.max(jumpIfTrue, jumpIfFalse) >= program.length) {
      throw new RangeError(`instruction ${index} jumps past the end of the program`)
    }
    const offset = index * INSTRUCTION_BYTES
    bytes.writeUInt16LE(code, offset)
    bytes.writeUInt8(jumpIfTrue, offset + 2)
    bytes.writeUInt8(jumpIfFalse, offset + 3)
    bytes.writeUInt32LE(k, offset + 4)
  })
  if (program.at(-1)!.code !== OPCODE.return) throw new RangeError('a seccomp program must end with a return')
  return bytes
}

function isInteger(value: number, max: number): boolean {
  return Number.isInteger(value) && value >= 0 && value <= max
}
