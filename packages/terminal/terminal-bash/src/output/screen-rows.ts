/** Screen size the line view assumes until told otherwise (the backend's default terminal size). */
export const DEFAULT_SCREEN = { rows: 40, cols: 160 } as const

/**
 * Which row of the normal screen the cursor is on, and the text each visible row was last completed
 * with, so a program that moves the cursor up and redraws rows the history already holds (a pager
 * without the alternate screen repainting its page) does not repeat them in the line history: a
 * terminal's history never receives a row overwritten in place. A row redrawn with other text is
 * still a new line. Rows are counted from completed lines (a long line wraps over `cols`) and from
 * the cursor moves that name rows; O(1) per line, a few strings held.
 */
export class ScreenRows {
  #rows: number
  #cols: number
  // Text per row, a ring: row r is at (top + r) % rows; undefined when not known.
  #texts: (string | undefined)[]
  #top = 0
  #row = 0
  // The lowest row the output reached: rows above it that are redrawn may repeat what they held.
  #bottom = 0
  #verticalMoves = 0

  /** A screen of `rows` × `cols` (positive integers) with the cursor at its top. */
  constructor(rows: number = DEFAULT_SCREEN.rows, cols: number = DEFAULT_SCREEN.cols) {
    checkSize(rows, cols)
    this.#rows = rows
    this.#cols = cols
    this.#texts = new Array(rows)
  }

  /** The screen changed size: what rows held is forgotten, the cursor stays inside. */
  resize(rows: number, cols: number): void {
    checkSize(rows, cols)
    this.#rows = rows
    this.#cols = cols
    this.#texts = new Array(rows)
    this.#top = 0
    this.#row = Math.min(this.#row, rows - 1)
    this.#bottom = Math.min(this.#bottom, rows - 1)
  }

  /**
   * Cursor moves that changed its row other than by completing a line, and scroll regions set: a
   * program that draws in place (a dialog, a progress table, a readline redraw). Its line history
   * is then fragments; the screen is what it drew.
   */
  get verticalMoves(): number {
    return this.#verticalMoves
  }

  /** The cursor moved to row `row` (0-based, clamped to the screen). */
  moveTo(row: number): void {
    const to = Math.max(0, Math.min(this.#rows - 1, row))
    if (to !== this.#row) this.#verticalMoves += 1
    this.#row = to
  }

  /** A scroll region was set (DECSTBM): lines scroll inside it, and the cursor goes home. */
  scrollRegion(): void {
    this.#verticalMoves += 1
    this.#row = 0
  }

  /** The cursor moved `count` rows (negative: up). */
  moveBy(count: number): void {
    this.moveTo(this.#row + count)
  }

  /** Erase in display: 0 from the cursor's row down, 1 up to it, 2 everything. */
  erase(mode: number): void {
    const from = mode === 0 ? this.#row : 0
    const to = mode === 1 ? this.#row + 1 : this.#rows
    for (let row = from; row < to; row++) this.#texts[(this.#top + row) % this.#rows] = undefined
    if (mode !== 1) this.#bottom = this.#row
  }

  /**
   * A line of `text` (`length` columns) completes on the cursor's row and the cursor moves below
   * it. Returns false when it redraws a row above the output's bottom with the very text that row
   * already had: the history holds it already.
   */
  complete(text: string, length: number): boolean {
    const row = this.#row
    const last = this.#rows - 1
    if (row === last && length <= this.#cols) {
      // Nearly every line of a flood: it completes on the bottom row and the screen scrolls by one.
      // The row entering at the bottom keeps a stale text: the bottom row is never compared.
      const top = this.#top
      this.#texts[top === 0 ? last : top - 1] = text
      this.#top = top === last ? 0 : top + 1
      this.#bottom = last
      return true
    }
    const slot = (this.#top + row) % this.#rows
    if (row < this.#bottom && this.#texts[slot] === text) {
      this.#row = row + 1
      return false
    }
    this.#texts[slot] = text
    const next = row + (length <= this.#cols ? 1 : Math.ceil(length / this.#cols))
    // Rows a long line wrapped onto hold no line of their own.
    for (let below = row + 1; below < Math.min(next, this.#rows); below++) this.#texts[(this.#top + below) % this.#rows] = undefined
    if (next <= last) {
      this.#row = next
    } else {
      // The screen scrolls: the top rows go to the history and blank rows enter at the bottom.
      const scrolled = Math.min(next - last, this.#rows)
      this.#top = (this.#top + scrolled) % this.#rows
      for (let row = this.#rows - scrolled; row < this.#rows; row++) this.#texts[(this.#top + row) % this.#rows] = undefined
      this.#row = last
    }
    if (this.#row > this.#bottom) this.#bottom = this.#row
    return true
  }
}

function checkSize(rows: number, cols: number): void {
  if (!Number.isSafeInteger(rows) || rows < 1 || !Number.isSafeInteger(cols) || cols < 1) throw new RangeError('rows and cols must be positive integers')
}
