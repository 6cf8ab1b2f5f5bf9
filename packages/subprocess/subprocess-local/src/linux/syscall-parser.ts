/**
 * What `/proc/<pid>/task/<tid>/syscall` says about a thread: `running` (on or queued for a CPU),
 * `user` (blocked outside any syscall, e.g. stopped), or blocked in syscall `nr` with its six
 * arguments. The kernel only prints a syscall for a thread that stayed off-CPU while it looked.
 */
export type SyscallState =
  | { readonly kind: 'running' }
  | { readonly kind: 'user' }
  | { readonly kind: 'syscall'; readonly nr: number; readonly args: readonly bigint[] }

/** Parse the syscall file; malformed content is `undefined` (a miss, never a guess). */
export function parseSyscall(text: string | undefined): SyscallState | undefined {
  if (text === undefined) return undefined
  const line = text.trim()
  if (line === 'running') return { kind: 'running' }
  const parts = line.split(/\s+/)
  if (parts[0] === '-1') return parts.length === 3 && parts.slice(1).every(isHex) ? { kind: 'user' } : undefined
  if (parts.length !== 9 || !/^\d+$/.test(parts[0] ?? '')) return undefined
  const nr = Number(parts[0])
  const args = parts.slice(1, 7)
  if (!Number.isSafeInteger(nr) || !parts.slice(1).every(isHex)) return undefined
  return { kind: 'syscall', nr, args: args.map((arg) => BigInt(arg)) }
}

function isHex(text: string): boolean {
  return /^0x[0-9a-fA-F]{1,16}$/.test(text)
}
