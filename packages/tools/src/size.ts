/** Binary units after bytes, each 1024 times the one before. */
const UNITS = ['KiB', 'MiB', 'GiB', 'TiB'] as const

/**
 * A byte count as a reader takes it in at a glance: `512 bytes`, `12.3 KiB`, `1.8 MiB` (one decimal,
 * binary units). Used in elision lines, where exact sizes would only add digits.
 */
export function formatByteSize(bytes: number): string {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`bytes must be a non-negative integer, got ${bytes}`)
  if (bytes < 1024) return bytes === 1 ? '1 byte' : `${bytes} bytes`
  let tenths = Math.round((bytes * 10) / 1024)
  let unit = 0
  // Move up a unit when the rounded value would read 1024.0 or more (1023.96 KiB is 1.0 MiB).
  while (tenths >= 10240 && unit < UNITS.length - 1) {
    unit++
    tenths = Math.round((bytes * 10) / 1024 ** (unit + 1))
  }
  return `${(tenths / 10).toFixed(1)} ${UNITS[unit]}`
}
