import { MAX_TERMINAL_COLS, MAX_TERMINAL_ROWS, type TerminalSize } from 'dsh-terminal'
import { z } from 'zod'

/** The `rows` parameter of terminal_open and terminal_send: a height in character rows, within the registry's bounds. */
export function rowsParam(description: string) {
  return extentParam('rows', 'rows', MAX_TERMINAL_ROWS, description)
}

/** The `cols` parameter of terminal_open and terminal_send: a width in character columns, within the registry's bounds. */
export function colsParam(description: string) {
  return extentParam('cols', 'columns', MAX_TERMINAL_COLS, description)
}

/** One side of a window size: a whole number from 1 to `max`, with messages that name it. */
function extentParam(name: string, unit: string, max: number, description: string) {
  return z
    .number()
    .int(`${name} must be a whole number of ${unit}`)
    .min(1, `${name} must be at least 1`)
    .max(max, `${name} must be at most ${max}`)
    .optional()
    .describe(description)
}

/** The arguments that carry a window size. */
export interface WindowSizeArgs {
  rows?: number
  cols?: number
}

/** A size is both numbers or neither: one alone is refused, naming the missing one. */
export function checkWindowSize(args: WindowSizeArgs, issues: Pick<z.core.$RefinementCtx, 'addIssue'>): void {
  if ((args.rows === undefined) === (args.cols === undefined)) return
  const missing = args.rows === undefined ? 'rows' : 'cols'
  issues.addIssue({
    code: 'custom',
    path: [missing],
    message: `rows and cols go together: give both (e.g. rows 40, cols 120) or neither; ${missing} is missing`,
  })
}

/** The size the arguments ask for, or undefined when they give none. */
export function windowSizeOf(args: WindowSizeArgs): TerminalSize | undefined {
  return args.rows === undefined || args.cols === undefined ? undefined : { rows: args.rows, cols: args.cols }
}
