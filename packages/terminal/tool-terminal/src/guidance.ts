import type { GuidanceSection } from 'dsh-tools'

/** Id of the system-prompt section this package registers. */
export const GUIDANCE_ID = 'terminal'

/**
 * The system-prompt section for the six tools: when a terminal is worth it, how to keep track of
 * sessions, what a wait reason does and does not prove, what the input states ask of the model,
 * how to handle a password and a person attached to the session, how to wait for long work, and
 * how to see and drive a full-screen program. Background advice only when enabled.
 */
export function terminalGuidance(enableRunInBackground: boolean): GuidanceSection {
  const lines = [
    'Use a terminal session only when state must persist between commands (cwd, exported variables, an activated virtualenv, a running REPL or debugger) or a program needs interactive input. For one-off commands and file edits prefer the one-shot tools: they are easier to audit.',
    '- terminal_open returns an id such as pty-1; pass that id (not the name) to the other terminal tools. Keep track of your ids; terminal_list shows them.',
    '- Close every session with terminal_close as soon as you no longer need it; its processes are stopped.',
    '- Each terminal_send ends with [wait: <reason>]. stdin_read: the shell or program is waiting for input. A command proven not to read the terminal (a sleep, a build) is waited for until it finishes, asks for input, matches waitFor or reaches timeoutMs, however quiet it is; give idleMs to get control back after that much silence. inferred_idle (output went quiet where nothing could be proven) and timeout do NOT prove the command finished; it may still be running. Check with terminal_read, or stop it with terminal_signal SIGINT.',
    '- [exit: <n>] is the exit status of the command this send ran, shown only when it ended during the call; without it the command may still run, or never ran. [session: exited …] means the terminal itself ended; open a new one.',
    "- A session runs one send at a time. Output a result did not show is kept: read it with terminal_read. Output printed after a result starts the next send's result, under [earlier output, printed after the previous result]. Text sent while a command still runs waits until it ends: what that command printed first comes under the same label, and your output starts at the next prompt.",
    '- Long output comes back as its head and tail; the line between them ([… N lines … left out; terminal_read {…} returns them]) is the exact call that returns the middle, and [… N more identical lines] stands for repeats. maxBytes asks for a larger or smaller result.',
    '- [input: …] says what the terminal waits for: prompt (the shell), continuation (the command is unfinished: send the rest, or "\\u0003" to abandon it), password (a secret: ask the user for it, never invent one), program (a REPL or question reads lines), keys (a full-screen program such as vim or less), none (busy).',
    '- When a program asks for a password ([input: password …], followed by [secret: …]), ask the user: they can type it themselves with dsh-terminal attach <session id> (the secret then never passes through you), or give it to you; once they say they typed it, terminal_read shows what followed. Never guess a password, and never type one you were not given.',
    '- A person may attach to your session (dsh-terminal attach <session id>, or a web view) to watch or type: results then end with [human: watching] or [human: typing], and terminal_list shows human=…. What they type runs in the same shell, so read before assuming its state. While they type, your sends are refused with HUMAN_ACTIVE: wait a few seconds or terminal_read what they did, then send again; do not race them for the terminal.',
    `- To wait for long-running work, give terminal_send waitFor, a regular expression for the line you expect (a server's "ready", a test summary): it returns as soon as a new line matches, with [wait: output_match]${
      enableRunInBackground ? '; a background job ends there, and job_output takes waitFor too' : ''
    }. timeoutMs bounds the wait.`,
    '- A full-screen program (vim, less, top, a menu; [input: keys]) is a screen: a send returns it under [screen: <cols> cols x <rows> rows, cursor at row <row>, col <col>] (so does a program that drew in place, moving the cursor up, without the alternate screen), and terminal_read {view: "screen"} shows it again. Press keys instead of typing text, e.g. keys: ["Escape", ":", "w", "q", "Enter"] saves and quits vim, keys: ["q"] quits a pager. rows and cols on terminal_send resize the terminal.',
  ]
  if (enableRunInBackground) {
    lines.push(
      '- For a long-running command use terminal_send with run_in_background, then job_output to follow it and job_kill to interrupt it. A background job ends only when the shell waits for input again, a line matches its waitFor, or on its timeout, so a server stays running until job_kill.',
    )
  }
  return { id: GUIDANCE_ID, title: 'Terminal sessions', text: lines.join('\n') }
}
