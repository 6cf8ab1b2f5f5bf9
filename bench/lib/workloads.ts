// Commands more than one suite or child process runs, so every side drains the same bytes.

/** The flood every flood row drains: base64 of 20 MB of random bytes. */
export const FLOOD = 'head -c 20000000 /dev/urandom | base64'

/** Bytes of {@link FLOOD}'s output: 26 666 668 characters plus 350 879 newlines. */
export const FLOOD_BYTES = 27_017_547
