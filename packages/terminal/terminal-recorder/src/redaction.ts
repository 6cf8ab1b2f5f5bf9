import { isScrubbed } from 'dsh-subprocess'

/** What stands in a recording where a value the environment scrub drops was printed or typed. */
export const REDACTED = '[redacted]'

/** Shorter values are not hunted for: `1`, `yes` or a port number would blank out ordinary output. */
export const MIN_SECRET_LENGTH = 8

/**
 * The values of `environment` that the environment scrub drops (credential-shaped names such as
 * `GITHUB_TOKEN`, `DSH_*`, credential-shaped values), at least {@link MIN_SECRET_LENGTH} bytes long:
 * a session never saw them, and a recording never holds them, wherever they turn up.
 */
export function scrubbedValues(environment: Readonly<Record<string, string | undefined>>): string[] {
  const values = new Set<string>()
  for (const [name, value] of Object.entries(environment)) {
    if (value !== undefined && Buffer.byteLength(value) >= MIN_SECRET_LENGTH && isScrubbed(name, value)) values.add(value)
  }
  return [...values]
}

/**
 * Replaces every occurrence of some secret values in a byte stream cut into arbitrary chunks: a
 * chunk's tail that could begin a secret is held back until the next chunk (or {@link flush}) tells.
 * Without secrets it hands chunks through untouched.
 */
export class StreamRedactor {
  readonly #secrets: Buffer[]
  readonly #replacement = Buffer.from(REDACTED)
  #carry: Buffer | undefined

  constructor(secrets: readonly string[]) {
    this.#secrets = secrets.map((secret) => Buffer.from(secret))
  }

  /** True when there is nothing to look for. */
  get idle(): boolean {
    return this.#secrets.length === 0
  }

  /** The bytes of `chunk` (after any held back) that are safe to record now. */
  push(chunk: Uint8Array): Uint8Array {
    if (this.#secrets.length === 0) return chunk
    let data = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    if (this.#carry) {
      data = Buffer.concat([this.#carry, data])
      this.#carry = undefined
    }
    for (const secret of this.#secrets) if (data.includes(secret)) data = replaceAll(data, secret, this.#replacement)
    const held = this.#heldBack(data)
    if (held === 0) return data
    this.#carry = Buffer.from(data.subarray(data.length - held))
    return data.subarray(0, data.length - held)
  }

  /** What is still held back (the stream ended, or something else is recorded next). */
  flush(): Uint8Array {
    const carry = this.#carry
    this.#carry = undefined
    return carry ?? new Uint8Array(0)
  }

  /** `text` with every secret replaced (input and labels are whole strings, not streams). */
  redactText(text: string): string {
    let result = text
    for (const secret of this.#secrets) if (result.includes(secret.toString())) result = result.replaceAll(secret.toString(), REDACTED)
    return result
  }

  /** Length of the longest tail of `data` that is the beginning of some secret. */
  #heldBack(data: Buffer): number {
    let held = 0
    for (const secret of this.#secrets) {
      for (let length = Math.min(secret.length - 1, data.length); length > held; length--) {
        if (data[data.length - length] !== secret[0]) continue
        if (data.subarray(data.length - length).equals(secret.subarray(0, length))) {
          held = length
          break
        }
      }
    }
    return held
  }
}

function replaceAll(data: Buffer, secret: Buffer, replacement: Buffer): Buffer {
  const parts: Buffer[] = []
  let from = 0
  for (let at = data.indexOf(secret); at >= 0; at = data.indexOf(secret, from)) {
    parts.push(data.subarray(from, at), replacement)
    from = at + secret.length
  }
  parts.push(data.subarray(from))
  return Buffer.concat(parts)
}
