/**
 * One scripted session against the snapshot overlay, shared by the headless and ACP snapshot tests:
 * every tool, a result over the 64-byte cap, a background job killed and collected, and errors
 * (a missing session, invalid arguments, an unknown tool).
 */
export const SCRIPT: { id: number; tool: string; arguments?: Record<string, unknown> }[] = [
  { id: 1, tool: 'terminal_open', arguments: { type: 'snapshot', name: 'main' } },
  { id: 2, tool: 'terminal_send', arguments: { sessionId: 'pty-1', text: 'seq 40' } },
  { id: 3, tool: 'terminal_read', arguments: { sessionId: 'pty-1', offset: 2, count: 3 } },
  { id: 4, tool: 'terminal_signal', arguments: { sessionId: 'pty-1', signal: 'SIGINT' } },
  { id: 5, tool: 'terminal_send', arguments: { sessionId: 'pty-1', text: 'sleep', run_in_background: true } },
  { id: 6, tool: 'job_kill', arguments: { jobId: 'pty-send-1' } },
  { id: 7, tool: 'job_output', arguments: { jobId: 'pty-send-1', wait: true } },
  { id: 8, tool: 'terminal_list', arguments: {} },
  { id: 9, tool: 'terminal_close', arguments: { sessionId: 'pty-1' } },
  { id: 10, tool: 'terminal_send', arguments: { sessionId: 'pty-1', text: 'echo again' } },
  { id: 11, tool: 'terminal_send', arguments: { sessionId: '', text: 'x' } },
  { id: 12, tool: 'terminal_teleport' },
]

/** The tools whose every result must fit the overlay's 64-byte cap. */
export const CAPPED_TOOLS = /^(terminal|job)_/

/** The overlay's `maxResultBytes`. */
export const MAX_RESULT_BYTES = 64
