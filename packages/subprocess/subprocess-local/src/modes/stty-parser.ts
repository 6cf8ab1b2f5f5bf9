import type { TerminalModes } from 'dsh-subprocess'

/** Where the two flags sit in `c_lflag`: the kernel's termios, not the stty build, decides. */
export interface LocalFlagBits {
  /** The ECHO bit. */
  readonly echo: number
  /** The ICANON bit. */
  readonly canonical: number
}

/** Linux's generic termbits (x86, arm, arm64, riscv, s390, mips …): ECHO 0o10, ICANON 0o2. */
const LINUX: LocalFlagBits = { echo: 0o10, canonical: 0o2 }
/** BSD termios (macOS), which Linux on PowerPC also follows: ECHO 0x8, ICANON 0x100. */
const BSD: LocalFlagBits = { echo: 0x8, canonical: 0x100 }

/** The `c_lflag` layout of a platform and CPU, or `undefined` where it is not known. */
export function localFlagBits(platform: NodeJS.Platform, arch: string): LocalFlagBits | undefined {
  if (platform === 'darwin') return BSD
  if (platform !== 'linux') return undefined
  return arch === 'ppc64' || arch === 'ppc' ? BSD : LINUX
}

/**
 * Decode `stty -g` output. GNU coreutils and busybox print `iflag:oflag:cflag:lflag:cc…` in hex;
 * BSD (macOS) prints `gfmt1:cflag=…:iflag=…:lflag=…:…`. Anything else is `undefined`.
 */
export function parseSttySettings(text: string | undefined, bits: LocalFlagBits): TerminalModes | undefined {
  const line = text?.trim()
  if (!line) return undefined
  let lflag: string | undefined
  if (line.startsWith('gfmt1:')) lflag = /:lflag=([0-9a-fA-F]{1,8})(?::|$)/.exec(line)?.[1]
  else if (/^[0-9a-fA-F]{1,8}(?::[0-9a-fA-F]{1,8}){4,}$/.test(line)) lflag = line.split(':')[3]
  if (lflag === undefined) return undefined
  const flags = Number.parseInt(lflag, 16)
  return { echo: (flags & bits.echo) !== 0, canonical: (flags & bits.canonical) !== 0 }
}
