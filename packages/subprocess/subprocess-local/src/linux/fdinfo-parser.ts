/** One registration in an epoll instance, from `/proc/<pid>/fdinfo/<epfd>`. */
export interface EpollTarget {
  /** The fd number the target was registered under. */
  readonly fd: number
  /** Requested event mask. */
  readonly events: number
  /** Inode of the registered file, when the kernel prints it. */
  readonly ino: number | undefined
}

/**
 * Parse the `tfd:` lines of an epoll fd's fdinfo. `undefined` when the file is not an epoll
 * instance's fdinfo or a line is malformed; an epoll with no registrations is `[]`.
 */
export function parseEpollTargets(text: string | undefined): EpollTarget[] | undefined {
  if (text === undefined || !/^pos:/m.test(text)) return undefined
  const targets: EpollTarget[] = []
  for (const line of text.split('\n')) {
    if (!line.startsWith('tfd:')) continue
    const match = /^tfd:\s*(\d+)\s+events:\s*([0-9a-fA-F]+)\s+data:\s*[0-9a-fA-F]+(?:\s+pos:\s*\d+)?(?:\s+ino:\s*([0-9a-fA-F]+))?/.exec(line)
    if (!match?.[1] || !match[2]) return undefined
    targets.push({ fd: Number(match[1]), events: Number.parseInt(match[2], 16), ino: match[3] ? Number.parseInt(match[3], 16) : undefined })
  }
  return targets
}
