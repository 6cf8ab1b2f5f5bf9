import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { pythonStartupFile } from '../src/repl/python-startup'

// The marking startup file in a real Python REPL on a real terminal (Python's own `pty` drives it),
// with stdout unbuffered as on machines that set PYTHONUNBUFFERED: readline then prints a prompt
// one byte per write, so the primary prompt's marker must go out ahead of it in one write.
const DRIVER = String.raw`
import json, os, pty, re, select, sys
setup, lines = json.loads(sys.argv[1]), json.loads(sys.argv[2])
pid, fd = pty.fork()
if pid == 0:
    os.environ.update(setup["env"])
    os.execvp("sh", ["sh", "-c", setup["command"]])
writes, seen = [], b""
def until(tail):
    global seen
    # Markers are invisible: the tail is what a person sees.
    while not re.sub(rb"\x1b\][^\x07]*\x07", b"", seen).endswith(tail.encode()):
        ready, _, _ = select.select([fd], [], [], 10)
        if not ready:
            raise SystemExit("timed out waiting for %r in %r" % (tail, seen[-200:]))
        chunk = os.read(fd, 65536)
        writes.append(chunk.decode("latin1"))
        seen += chunk
until(setup["prompt"])
for line, tail in lines:
    seen = b""
    os.write(fd, (line + "\r").encode())
    until(tail)
os.write(fd, b"\x04")
os.waitpid(pid, 0)
print(json.dumps("".join(writes)))
`
const NONCE = '424242'

/** Everything the REPL printed while `lines` were typed, each waited for until the stream ends with its tail. */
function drive(command: string, lines: [string, string][], prompt = '>>> '): string {
  const file = pythonStartupFile()
  if (!file) throw new Error('python-startup.py not found')
  const env = { PYTHONSTARTUP: file, DSH_PYTHON_MARKER: NONCE, PYTHONUNBUFFERED: '1', TERM: 'xterm-256color' }
  const out = execFileSync('python3', ['-c', DRIVER, JSON.stringify({ env, command, prompt }), JSON.stringify(lines)], { encoding: 'utf8', timeout: 20_000 })
  return JSON.parse(out) as string
}

/** The REPL marker for a prompt of `length` characters printed by the python whose pid is the marker's. */
const MARKER = new RegExp(String.raw`\x1b\]133;A;k=r;${NONCE};(\d+);(\d+);python[\w.]*\x07`, 'g')

/** Each marker in `stream`: its pid and prompt length, and what follows it. */
function markers(stream: string): { pid: number; length: number; after: string }[] {
  return [...stream.matchAll(MARKER)].map((match) => ({ pid: Number(match[1]), length: Number(match[2]), after: stream.slice(match.index + match[0].length) }))
}

describe('the Python startup file', () => {
  it('marks every primary prompt once, right before it, and each continuation prompt with its own length', () => {
    const stream = drive('exec python3 -q', [
      ['1+1', '2\r\n>>> '],
      ['if True:', '... '],
      ['  6*7', '... '],
      ['', '42\r\n>>> '],
    ])
    const found = markers(stream)
    // The first prompt, the two after a statement, and two continuation prompts: one marker each.
    expect(found).toHaveLength(5)
    expect(found.map((marker) => marker.after.slice(0, 4))).toEqual(['>>> ', '>>> ', '... ', '... ', '>>> '])
    expect(new Set(found.map((marker) => marker.pid)).size).toBe(1)
    expect(found.every((marker) => marker.length === 4)).toBe(true)
  })

  it('keeps the marker inside the prompt when Python code asks for it, so reading sys.ps1 shows it', () => {
    const stream = drive('exec python3 -q', [['print(repr(str(__import__("sys").ps1)))', '>>> ']])
    expect(stream).toMatch(/'\\x01\\x1b\]133;A;k=r;424242;\d+;4;python[\w.]*\\x07\\x02>>> '/)
  })

  it('follows the prompt to stderr when stdout is not the terminal, and to stdout when stderr is not', () => {
    const toStderr = drive('exec python3 -q > /dev/null', [['1+1', '>>> ']])
    const toStdout = drive('exec python3 -q 2> /dev/null', [['1+1', '2\r\n>>> ']])
    for (const stream of [toStderr, toStdout]) {
      const found = markers(stream)
      expect(found.length).toBe(2)
      expect(found.map((marker) => marker.after.slice(0, 4))).toEqual(['>>> ', '>>> '])
    }
  })
})
