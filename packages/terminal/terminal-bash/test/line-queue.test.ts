import { describe, expect, it } from 'vitest'
import { LineQueue } from '../src/output/line-queue'

const sizes = (lines: string[]) => lines.map((line) => Buffer.byteLength(line))

describe('LineQueue', () => {
  it('returns queued lines each with its newline, and empties', () => {
    const queue = new LineQueue(100)
    queue.push(['a', 'b'], [1, 1])
    queue.push(['c'], [1])
    expect(queue.bytes).toBe(6)
    expect(queue.take()).toBe('a\nb\nc\n')
    expect(queue.take()).toBe('')
  })

  it('replaces the first line of a chunk when asked', () => {
    const queue = new LineQueue(100)
    queue.push(['dsh> ls', 'x'], [7, 1], 'ls')
    expect(queue.bytes).toBe(5)
    expect(queue.take()).toBe('ls\nx\n')
  })

  it('keeps the newest bytes, cutting the oldest line at its head and keeping its newline', () => {
    const queue = new LineQueue(6)
    queue.push(['abcd', 'ef'], [4, 2])
    expect(queue.lost).toBe(2)
    expect(queue.take()).toBe('cd\nef\n')
    expect(queue.lost).toBe(0)
  })

  it('drops whole chunks a flood pushes out and counts every lost byte', () => {
    const queue = new LineQueue(10)
    queue.push(['old'], [3])
    const flood = Array.from({ length: 1000 }, (_, index) => `line${index}`)
    queue.push(flood, sizes(flood))
    expect(queue.bytes).toBe(10)
    const total = 4 + flood.reduce((sum, line) => sum + line.length + 1, 0)
    expect(queue.lost).toBe(total - 10)
    expect(queue.take()).toBe('8\nline999\n')
  })

  it('counts the lines it dropped whole, and whether the oldest one kept lost its head, until the next take', () => {
    const queue = new LineQueue(6)
    queue.push(['ab', 'cd'], [2, 2])
    expect([queue.droppedLines, queue.cutHead]).toEqual([0, false])
    queue.push(['ef'], [2])
    // 'ab\n' had to go whole, which leaves 'cd\nef\n'.
    expect([queue.droppedLines, queue.cutHead]).toEqual([1, false])
    queue.push(['g'], [1])
    // Two more bytes: 'cd' loses its text but stays a line (its newline is kept).
    expect([queue.droppedLines, queue.cutHead]).toEqual([1, true])
    expect(queue.take()).toBe('\nef\ng\n')
    expect([queue.droppedLines, queue.cutHead]).toEqual([0, false])
    const flood = Array.from({ length: 100 }, (_, index) => `l${index}`)
    queue.push(['old'], [3])
    queue.push(flood, sizes(flood))
    // 'old' and l0…l97 dropped whole; l98 kept its last byte.
    expect([queue.droppedLines, queue.cutHead]).toEqual([99, true])
    expect(queue.take()).toBe('8\nl99\n')
  })

  it('accounts lost bytes exactly', () => {
    const queue = new LineQueue(10)
    const lines = ['😀😀', 'abc', 'é']
    queue.push(lines, sizes(lines))
    const kept = queue.take()
    const all = lines.join('\n') + '\n'
    expect(all.endsWith(kept)).toBe(true)
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(10)
  })
})
