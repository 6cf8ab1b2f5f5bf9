import { INSTRUCTION_BYTES } from 'dsh-sandbox-local/internal'

/** What a syscall looks like to a seccomp filter: `struct seccomp_data` without the instruction pointer. */
export interface SeccompData {
  readonly architecture: number
  readonly syscall: number
  /** Up to six arguments, as 64-bit values. */
  readonly args?: readonly bigint[]
}

/**
 * Run an encoded classic-BPF seccomp program on one syscall, the way the kernel would, for the
 * opcodes a seccomp filter may use here (absolute word loads, constant jumps, constant returns).
 * Reads the bytes bwrap would read, so the encoder is checked too. Returns the filter's result.
 */
export function runFilter(program: Buffer, data: SeccompData): number {
  const words = seccompDataWords(data)
  let accumulator = 0
  let counter = 0
  for (let steps = 0; steps <= program.length / INSTRUCTION_BYTES; steps++) {
    const offset = counter * INSTRUCTION_BYTES
    if (offset >= program.length) throw new Error(`ran off the end of the program at ${counter}`)
    const code = program.readUInt16LE(offset)
    const jumpIfTrue = program.readUInt8(offset + 2)
    const jumpIfFalse = program.readUInt8(offset + 3)
    const k = program.readUInt32LE(offset + 4)
    counter++
    switch (code) {
      case 0x20: {
        if (k % 4 !== 0 || k / 4 >= words.length) throw new Error(`load from offset ${k} outside seccomp_data`)
        accumulator = words[k / 4]!
        break
      }
      case 0x15:
        counter += accumulator === k ? jumpIfTrue : jumpIfFalse
        break
      case 0x35:
        counter += accumulator >= k ? jumpIfTrue : jumpIfFalse
        break
      case 0x45:
        counter += (accumulator & k) >>> 0 !== 0 ? jumpIfTrue : jumpIfFalse
        break
      case 0x06:
        return k
      default:
        throw new Error(`opcode 0x${code.toString(16)} at ${counter - 1} is not one this interpreter knows`)
    }
  }
  throw new Error('the program did not return')
}

/** seccomp_data as little-endian 32-bit words: nr, arch, ip (2 words), then each argument's low and high word. */
function seccompDataWords(data: SeccompData): number[] {
  const words = [data.syscall >>> 0, data.architecture >>> 0, 0, 0]
  for (let index = 0; index < 6; index++) {
    const value = BigInt.asUintN(64, data.args?.[index] ?? 0n)
    words.push(Number(value & 0xffffffffn), Number(value >> 32n))
  }
  return words
}
