export { Deferred } from './deferred'
export { eventually } from './eventually'
export { type FarHost, startFarHost } from './far-host'
export { installed } from './programs'
export { type SshHost, startSshHost, writeKeysAndConfig } from './ssh-host'
export {
  children,
  commandLine,
  descendants,
  foregroundGroup,
  identify,
  isAlive,
  type ProcessIdentity,
  processesRunning,
  processesWithArgs,
  processName,
  statFields,
  stillRunning,
} from './proc'
