/**
 * The tools' parts, for this repository's tests and benchmarks: the tool factories and their
 * parameter schemas, the renderers and result bounding, the key and window-size checks, background
 * sends and cancellation, and the error constructors. Not the plugin's API — mount the plugin from
 * `dsh-tool-terminal` and call the tools through `ctx.tools`; these names may change in any release.
 */
export { startBackgroundSend, type BackgroundSendOptions, type JobStarter } from './background'
export { BackgroundHolders, explainBusy } from './background-holders'
export { DEFAULT_MAX_TIMEOUT_MS, DEFAULT_RESULT_BYTES, MAX_MAX_TIMEOUT_MS, MAX_RESULT_BYTES, MIN_RESULT_BYTES } from './config'
export { jobsUnavailable, noScreen, sendCancelled, terminalToolError } from './errors'
export { terminalGuidance } from './guidance'
export { KEY_NAMES_PHRASE, keysProblem, suggestKeyName } from './keys'
export { boundContent, EARLIER_MARKER, fitResult, TRUNCATION_MARKER, type MetaLine, type ResultLayout } from './render/result-fit'
export * from './render/texts'
export { closeParameters, closeTool } from './tools/close'
export { listParameters, listTool } from './tools/list'
export { openParameters, openTool } from './tools/open'
export { DEFAULT_READ_COUNT, readParameters, readTool } from './tools/read'
export { CANCEL_GRACE_MS, type SendParameterOptions, sendParameters, sendTool, settleOrCancel } from './tools/send'
export { INPUT_STATE_WAIT_MS, inputStateOf, type ToolDeps } from './tools/tool-parts'
export { signalParameters, signalTool } from './tools/signal'
export { checkWindowSize, colsParam, rowsParam, type WindowSizeArgs, windowSizeOf } from './tools/window-size'
