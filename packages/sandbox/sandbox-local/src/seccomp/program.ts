import { SandboxError } from 'dsh-sandbox'
import { encode, errnoResult, type Instruction, jump, load, OPCODE, RESULT, returnWith, SECCOMP_DATA } from './bpf'
import { ERRNO, SECCOMP_RULES, type SeccompRule } from './rules'
import { AUDIT_ARCH, type SeccompArchitecture, SYSCALL_NUMBERS } from './syscalls'

/** x32 syscalls on x86_64 carry this bit in their number (__X32_SYSCALL_BIT). */
export const X32_SYSCALL_BIT = 0x40000000

/** Node's `process.arch` names of the architectures the filter supports. */
const NODE_ARCHITECTURES: Readonly<Record<string, SeccompArchitecture>> = { x64: 'x86_64', arm64: 'aarch64' }

/**
 * The filter's architecture for this Node build. Any other refuses to confine: a sandbox without
 * the filter would let uid 0 reach the host kernel's keyrings and user namespaces.
 */
export function seccompArchitecture(nodeArch: string = process.arch): SeccompArchitecture {
  const architecture = NODE_ARCHITECTURES[nodeArch]
  if (architecture === undefined) {
    throw new SandboxError(
      'SANDBOX_UNAVAILABLE',
      `the sandbox's seccomp filter has syscall tables for x64 and arm64 only, and this host is ${nodeArch}: ` +
        'refusing to run commands without it; run the host on x86_64 or aarch64',
    )
  }
  return architecture
}

/**
 * The filter for one architecture. A syscall from another architecture (i386 or arm32 compat
 * entry points, whose numbers mean other syscalls) kills the process; x32 numbers fail with
 * ENOSYS as on kernels built without x32; then each rule in order; everything else is allowed.
 */
export function seccompProgram(architecture: SeccompArchitecture): Instruction[] {
  const program: Instruction[] = [
    load(SECCOMP_DATA.architecture),
    jump(OPCODE.jumpIfEqual, AUDIT_ARCH[architecture], 1, 0),
    returnWith(RESULT.killProcess),
    load(SECCOMP_DATA.syscallNumber),
  ]
  if (architecture === 'x86_64') program.push(jump(OPCODE.jumpIfAtLeast, X32_SYSCALL_BIT, 0, 1), returnWith(errnoResult(ERRNO.ENOSYS)))
  const numbers = SYSCALL_NUMBERS[architecture]
  for (const rule of SECCOMP_RULES) {
    const number = numbers[rule.syscall]
    if (number === undefined) continue
    const check = ruleCheck(rule)
    // The syscall number stays in the accumulator while no rule matches; a matching rule's check
    // always returns, so it may load an argument over it.
    program.push(jump(OPCODE.jumpIfEqual, number, 0, check.length), ...check)
  }
  program.push(returnWith(RESULT.allow))
  return program
}

/** The encoded filter for an architecture, as bwrap's `--seccomp` reads it. */
export function encodedSeccompProgram(architecture: SeccompArchitecture): Buffer {
  return encode(seccompProgram(architecture))
}

/** Instructions run once the syscall number matched: each path ends in a return. */
function ruleCheck(rule: SeccompRule): Instruction[] {
  const refused = returnWith(errnoResult(rule.errno))
  const allowed = returnWith(RESULT.allow)
  const condition = rule.refuseWhen
  switch (condition.kind) {
    case 'always':
      return [refused]
    case 'any-bit':
      return [load(SECCOMP_DATA.argumentLow(condition.argument)), jump(OPCODE.jumpIfAnyBit, condition.mask, 0, 1), refused, allowed]
    case 'one-of':
      // Each comparison jumps to `refused`, which follows the last one; no match falls to `allowed`.
      return [load(SECCOMP_DATA.argumentLow(condition.argument)), ...matchAny(condition.values), allowed, refused]
    case 'none-of':
      return [load(SECCOMP_DATA.argumentLow(condition.argument)), ...matchAny(condition.values), refused, allowed]
  }
}

/** Comparisons that skip to the second instruction after the last one when the accumulator equals any value. */
function matchAny(values: readonly number[]): Instruction[] {
  return values.map((value, index) => jump(OPCODE.jumpIfEqual, value, values.length - index, 0))
}
