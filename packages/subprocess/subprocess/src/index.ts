export { EnvAllowSchema, isScrubbed, scrubEnvironment } from './env'
export { isSubprocessError, SubprocessError, type SubprocessErrorCode, TerminalCleanupError } from './errors'
export { isNewWait } from './new-wait'
export { SubprocessRuntime } from './service'
export { canProveStdinWait, isStdinWaitProven, isStdinWaitProvenOrUnprovable, isStdinWaitUnproven } from './stdin-wait-proof'
export { isTargetName, validateDurableSpec, validateEnvFiles, validateSpawnSpec, validateTerminalFacts, validateTerminalSize, wrappedArgv } from './spec'
export { LOCAL_TARGET, MAX_TERMINAL_FACTS_BYTES } from './types'
export type {
  AdoptedTerminal,
  AppliedTerminalLimits,
  DetachedTerminal,
  DurableTerminalSpec,
  ForegroundFacts,
  ForegroundProgram,
  InspectOptions,
  KnownSyscall,
  StdinWait,
  StdinWaitProof,
  StdinWaitSyscall,
  SpawnWrapper,
  SubprocessTerminalHandle,
  TerminalExit,
  TerminalLimits,
  TerminalModes,
  TerminalOutputListener,
  TerminalSpawnSpec,
  ThreadSample,
  ThreadState,
  UnreachableTarget,
  WrappedAhead,
} from './types'
