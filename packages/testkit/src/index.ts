export { Deferred } from './deferred'
export { eventually, type Probe } from './eventually'
export { installed } from './programs'
export {
  children,
  commandLine,
  descendants,
  foregroundGroup,
  identify,
  isAlive,
  type ProcessIdentity,
  processesRunning,
  processName,
  statFields,
  stillRunning,
} from './proc'
