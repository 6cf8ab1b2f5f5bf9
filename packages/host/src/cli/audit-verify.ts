import { readFile } from 'node:fs/promises'
import { errorMessage } from 'dsh-basics'
import { verifyChain } from '../audit/chain'

/**
 * `dsh-terminal-mcp audit verify FILE`: check the log's hash chain. Exit 0 with one summary line on
 * stdout when it holds; 1 with the line number and kind of the first break on stderr otherwise
 * (and when the file cannot be read).
 */
export async function runAuditVerify(file: string): Promise<number> {
  let content: string
  try {
    content = await readFile(file, 'utf8')
  } catch (error) {
    process.stderr.write(`dsh-terminal audit verify: cannot read ${file}: ${errorMessage(error)}\n`)
    return 1
  }
  const report = verifyChain(content)
  if (report.ok) {
    process.stdout.write(`${file}: ok, ${report.lines} record${report.lines === 1 ? '' : 's'}, chain intact; last line's sha256 ${report.lastHash}\n`)
    return 0
  }
  const { kind, line, detail } = report.break
  process.stderr.write(`${file}:${line}: ${kind}: ${detail}\n`)
  return 1
}
