import { describe, expect, it } from 'vitest'
import { KERNEL_MASKS, kernelMaskOptions } from 'dsh-sandbox-local/internal'

describe('kernel masks', () => {
  it('every row says why, and names a path under /proc or /sys once', () => {
    for (const mask of KERNEL_MASKS) {
      expect(mask.why.length, mask.path).toBeGreaterThan(10)
      expect(mask.path).toMatch(/^\/(proc|sys)\//)
    }
    expect(new Set(KERNEL_MASKS.map((mask) => mask.path)).size).toBe(KERNEL_MASKS.length)
  })

  it('read-only rows bind the file over itself (bwrap skips a missing one); masks go only over what exists', () => {
    const everything = kernelMaskOptions(() => true)
    const nothing = kernelMaskOptions(() => false)
    for (const { path, treatment } of KERNEL_MASKS) {
      const at = everything.indexOf(path)
      if (treatment === 'read-only') {
        expect(everything.slice(at - 1, at + 2)).toEqual(['--ro-bind-try', path, path])
        expect(nothing).toContain(path)
      } else {
        expect(nothing).not.toContain(path)
        if (treatment === 'hidden') expect(everything.slice(at - 2, at + 1)).toEqual(['--ro-bind', '/dev/null', path])
        else expect(everything.slice(at - 1, at + 3)).toEqual(['--tmpfs', path, '--remount-ro', path])
      }
    }
  })

  it('covers what Docker keeps from a root container', () => {
    const paths = KERNEL_MASKS.map((mask) => mask.path)
    for (const path of [
      '/proc/sys',
      '/proc/sysrq-trigger',
      '/proc/irq',
      '/proc/bus',
      '/proc/fs',
      '/proc/kcore',
      '/proc/keys',
      '/proc/timer_list',
      '/sys/firmware',
    ]) {
      expect(paths).toContain(path)
    }
  })
})
