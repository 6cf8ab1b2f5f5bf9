import { describe, expect, it } from 'vitest'
import { escapeMountinfo, mountIdentity, parseMountinfo, unescapeMountinfo } from 'dsh-sandbox-local/internal'

/** A host mount table shaped like real ones: a root, nested and stacked mounts, escaped names. */
const HOST = [
  '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw',
  '22 27 0:21 / /proc rw,relatime - proc proc rw',
  '24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw',
  // A project directory bound from elsewhere on the same disk: its root is not "/".
  '40 27 254:0 /srv/exports/team /home/team rw,relatime - ext4 /dev/vda rw',
  // A disk mounted at a name with a space, then a tmpfs stacked on it (the visible one).
  '41 27 254:1 / /mnt/data\\040disk rw,relatime - ext4 /dev/vdb rw',
  '42 41 0:50 / /mnt/data\\040disk rw,relatime - tmpfs tmpfs rw',
  // /opt/a/b mounted first, then /opt/a over its parent directory: /opt/a/b is hidden.
  '43 27 254:2 / /opt/a/b rw,relatime - ext4 /dev/vdc rw',
  '44 27 254:3 /sub /opt/a rw,relatime - ext4 /dev/vdd rw',
  'not a mountinfo line',
].join('\n')

describe('mountinfo escapes', () => {
  it('escapes space, tab, newline and backslash as three octal digits, as the kernel does, and back', () => {
    const path = '/w/a b\tc\nd\\e'
    expect(escapeMountinfo(path)).toBe('/w/a\\040b\\011c\\012d\\134e')
    expect(unescapeMountinfo(escapeMountinfo(path))).toBe(path)
    expect(escapeMountinfo('/w/$(x);"*\'')).toBe('/w/$(x);"*\'')
  })

  it('parses ids, device, root and mount point, unescaped, and skips malformed lines', () => {
    const entries = parseMountinfo(HOST)
    expect(entries).toHaveLength(8)
    expect(entries[4]).toEqual({ id: '41', parent: '27', device: '254:1', root: '/', mountPoint: '/mnt/data disk', readOnly: false })
    // Read-only is the first per-mount option, not the filesystem's own options at the end.
    expect(parseMountinfo('68 45 254:0 / / ro,nosuid - ext4 /dev/vda rw')[0]?.readOnly).toBe(true)
    expect(parseMountinfo('68 45 254:0 / / rw,nosuid - ext4 /dev/vda ro')[0]?.readOnly).toBe(false)
  })
})

describe('mountIdentity: what a bind of a host path shows in mountinfo', () => {
  const mounts = parseMountinfo(HOST)

  it('takes the deepest mount containing the path and appends the path below its mount point', () => {
    expect(mountIdentity(mounts, '/var/tmp/ws/.git')).toEqual({ device: '254:0', root: '/var/tmp/ws/.git' })
    expect(mountIdentity(mounts, '/dev/null')).toEqual({ device: '0:6', root: '/null' })
    expect(mountIdentity(mounts, '/proc')).toEqual({ device: '0:21', root: '/' })
    // A path beside a mount point with a common prefix is not inside it.
    expect(mountIdentity(mounts, '/procfs/x')).toEqual({ device: '254:0', root: '/procfs/x' })
  })

  it("adds the mount's own root when it shows a subdirectory", () => {
    expect(mountIdentity(mounts, '/home/team/repo/.git/hooks')).toEqual({ device: '254:0', root: '/srv/exports/team/repo/.git/hooks' })
  })

  it('takes the visible one of stacked mounts, and handles names with spaces', () => {
    expect(mountIdentity(mounts, '/mnt/data disk/ws/.git')).toEqual({ device: '0:50', root: '/ws/.git' })
  })

  it('skips a mount hidden by a later mount over its parent directory', () => {
    expect(mountIdentity(mounts, '/opt/a/b/file')).toEqual({ device: '254:3', root: '/sub/b/file' })
  })

  it('is undefined without a root mount', () => {
    expect(mountIdentity(parseMountinfo('30 29 0:6 / /dev rw - devtmpfs devtmpfs rw'), '/etc/passwd')).toBeUndefined()
  })
})
