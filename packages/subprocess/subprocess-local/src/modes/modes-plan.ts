import { type LocalFlagBits, localFlagBits } from './stty-parser'

/** macOS: the system's own tools, whatever a package manager put first on PATH. */
const DARWIN_SYSTEM_PATH = '/bin:/usr/bin'

/** How a platform's terminal flags are read: perl's `tcgetattr` first, `stty -g` as the fallback. */
export interface ModesPlan {
  /** Where ECHO and ICANON sit in `c_lflag`, to decode `stty -g` (perl brings its own constants). */
  readonly bits: LocalFlagBits
  /** The perl that runs the termios helper, and the PATH it runs with. */
  readonly perl: { readonly file: string; readonly path: string }
  /** How stty names a device (`-F` GNU/busybox, `-f` BSD), and the PATH it is found on. */
  readonly stty: { readonly deviceOption: '-F' | '-f'; readonly path: string }
}

/**
 * The plan for `platform` on `arch`, or `undefined` where the termios layout is not known (nothing
 * is started there). Linux uses the host's PATH for both tools (Debian's essential `perl-base`
 * carries `POSIX`; busybox systems usually have no perl and fall back to busybox `stty`); macOS
 * uses its system `/usr/bin/perl` and BSD `/bin/stty`.
 */
export function modesPlan(platform: NodeJS.Platform, arch: string, hostPath: string = process.env.PATH ?? '/usr/bin:/bin'): ModesPlan | undefined {
  const bits = localFlagBits(platform, arch)
  if (!bits) return undefined
  if (platform === 'darwin') {
    return { bits, perl: { file: '/usr/bin/perl', path: DARWIN_SYSTEM_PATH }, stty: { deviceOption: '-f', path: DARWIN_SYSTEM_PATH } }
  }
  return { bits, perl: { file: 'perl', path: hostPath }, stty: { deviceOption: '-F', path: hostPath } }
}
