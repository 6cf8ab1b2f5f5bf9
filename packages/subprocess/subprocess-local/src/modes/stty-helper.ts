import { LineHelper, REPLY_TIMEOUT_MS } from './line-helper'

/** How a helper is started (tests shorten the bound and point PATH at a fake stty). */
export interface SttyHelperOptions {
  /** PATH the helper finds `stty` on (default: the host's). */
  readonly path?: string | undefined
  /** Longest wait for one reply (default 2000 ms). */
  readonly replyTimeoutMs?: number
}

/**
 * One long-lived `/bin/sh` that answers each device path written to it with one line of
 * `stty -g` for that device (empty when stty failed). Node has no `tcgetattr`, and spawning stty
 * from the host forks the whole host on the event loop's thread (milliseconds of stall); the
 * small shell forks instead (about 2 ms a read). The process management (lazy start, own group,
 * bounded wait, replacement, leaving with the host) is {@link LineHelper}'s; a stuck `stty` is
 * killed with the helper's group.
 */
export class SttyHelper {
  readonly #helper: LineHelper

  /** `deviceOption`: how this platform's stty names a device (`-F` GNU/busybox, `-f` BSD). */
  constructor(deviceOption: '-F' | '-f', options: SttyHelperOptions = {}) {
    // stty runs as the helper's child, not a session leader, so the device never becomes its controlling terminal.
    this.#helper = new LineHelper({
      file: '/bin/sh',
      args: ['-c', `while IFS= read -r d; do stty -g ${deviceOption} "$d" 2>/dev/null || echo; done`],
      env: { PATH: options.path ?? process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' },
      replyTimeoutMs: options.replyTimeoutMs ?? REPLY_TIMEOUT_MS,
    })
  }

  /** Pid of the running helper, if one runs (diagnostics and tests). */
  get pid(): number | undefined {
    return this.#helper.pid
  }

  /** The `stty -g` line for `device`; `undefined` when it could not be read. Never rejects. */
  async read(device: string): Promise<string | undefined> {
    return (await this.#helper.request(device)) || undefined
  }

  /** Stop the helper; pending and later reads resolve `undefined`. */
  dispose(): Promise<void> {
    return this.#helper.dispose()
  }
}
