import { createRequire } from 'node:module'

/** The slice of node-pty the floors use (its typings are an ambient module the bench cannot import by path). */
export interface RawPty {
  readonly pid: number
  onData(listener: (data: string | Buffer) => void): unknown
  onExit(listener: () => void): unknown
  write(data: string | Buffer): void
  kill(signal?: string): void
}

type Spawn = (file: string, args: string[], options: Record<string, unknown>) => RawPty

/** node-pty as the provider resolves it, so floor and provider run the very same native module. */
export const pty = createRequire(new URL('../../packages/subprocess/subprocess-local/package.json', import.meta.url))('node-pty') as { spawn: Spawn }
