/**
 * A strict parser of the Prometheus text exposition format, version 0.0.4, written from the published
 * format (prom-client ships no parser): `# HELP` and `# TYPE` lines, samples
 * `name{label="value",…} value [timestamp]`, escapes in help texts and label values, and the rules a
 * scraper relies on — a family's TYPE before its samples, its samples together, no series twice,
 * counters never negative, histogram buckets cumulative up to `le="+Inf"` equal to `_count`.
 * Anything else throws, naming the line.
 */

/** One sample line. */
export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

/** One metric family: its TYPE, HELP and samples. */
export interface Family {
  readonly name: string
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped'
  help?: string
  readonly samples: Sample[]
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped'])

/** Parse a whole exposition; throws `line N: …` on the first violation. */
export function parsePrometheusText(text: string): Map<string, Family> {
  if (text !== '' && !text.endsWith('\n')) throw new Error('the exposition must end with a newline')
  const families = new Map<string, Family>()
  const finished = new Set<string>()
  let current: Family | undefined
  const seen = new Set<string>()
  const lines = text.split('\n')
  lines.pop()
  for (const [index, line] of lines.entries()) {
    const fail = (message: string): never => {
      throw new Error(`line ${index + 1}: ${message}: ${JSON.stringify(line)}`)
    }
    if (line.trim() === '') continue
    if (line.startsWith('#')) {
      const meta = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line)
      if (!meta) continue // a plain comment
      const [, keyword, name, rest = ''] = meta
      if (!METRIC_NAME.test(name!) || METRIC_NAME.exec(name!)![0] !== name) fail('bad metric name')
      if (finished.has(name!)) fail(`family ${name} resumes after other families`)
      let family = families.get(name!)
      if (!family) {
        family = { name: name!, type: 'untyped', samples: [] }
        families.set(name!, family)
      }
      if (current && current !== family) finished.add(current.name)
      current = family
      if (keyword === 'TYPE') {
        if (!TYPES.has(rest)) fail(`unknown type "${rest}"`)
        if (family.samples.length) fail('TYPE after samples of its family')
        family.type = rest as Family['type']
      } else {
        if (family.help !== undefined) fail('a second HELP')
        family.help = unescapeHelp(rest, false, fail)
      }
      continue
    }
    const sample = parseSample(line, fail)
    const family = familyOf(sample.name, families) ?? fail(`sample of ${sample.name} has no TYPE or HELP before it`)
    if (family !== current) fail(`sample of family ${family.name} outside its group`)
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`
    if (seen.has(key)) fail('a series given twice')
    seen.add(key)
    if (family.type === 'counter' && !(sample.value >= 0)) fail('a negative or NaN counter')
    family.samples.push(sample)
  }
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family)
  return families
}

/** The value of the series `name` with exactly `labels`, or undefined. */
export function seriesValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  const family = familyOf(name, families)
  const wanted = JSON.stringify(Object.entries(labels).sort())
  return family?.samples.find((sample) => sample.name === name && JSON.stringify(Object.entries(sample.labels).sort()) === wanted)?.value
}

/** A sample's family: its own name, or for `_bucket`, `_sum`, `_count` a histogram or summary of the stem. */
function familyOf(name: string, families: Map<string, Family>): Family | undefined {
  const own = families.get(name)
  if (own) return own
  const suffix = /_(bucket|sum|count)$/.exec(name)
  if (!suffix) return undefined
  const stem = families.get(name.slice(0, -suffix[0].length))
  if (!stem) return undefined
  if (stem.type === 'histogram' || (stem.type === 'summary' && suffix[1] !== 'bucket')) return stem
  return undefined
}

function parseSample(line: string, fail: (message: string) => never): Sample {
  const name = METRIC_NAME.exec(line)?.[0] ?? fail('no metric name')
  let rest = line.slice(name.length)
  const labels: Record<string, string> = {}
  if (rest.startsWith('{')) {
    rest = rest.slice(1)
    while (!rest.startsWith('}')) {
      const label = LABEL_NAME.exec(rest)?.[0] ?? fail('bad label name')
      if (label in labels) fail(`label ${label} twice`)
      rest = rest.slice(label.length)
      if (!rest.startsWith('="')) fail('label without ="')
      rest = rest.slice(2)
      let value = ''
      for (;;) {
        if (rest === '') fail('unterminated label value')
        const char = rest[0]!
        if (char === '"') break
        if (char === '\\') {
          const next = rest[1]
          if (next === '\\' || next === '"') value += next
          else if (next === 'n') value += '\n'
          else fail('bad escape in a label value')
          rest = rest.slice(2)
        } else {
          if (char === '\n') fail('newline in a label value')
          value += char
          rest = rest.slice(1)
        }
      }
      rest = rest.slice(1)
      labels[label] = value
      if (rest.startsWith(',')) rest = rest.slice(1)
      else if (!rest.startsWith('}')) fail('labels not separated by ,')
    }
    rest = rest.slice(1)
  }
  const parts = /^ (\S+)(?: (-?\d+))?$/.exec(rest) ?? fail('value (and optional timestamp) expected after one space')
  return { name, labels, value: parseValue(parts[1]!, fail) }
}

function parseValue(text: string, fail: (message: string) => never): number {
  if (text === '+Inf') return Number.POSITIVE_INFINITY
  if (text === '-Inf') return Number.NEGATIVE_INFINITY
  if (text === 'NaN') return Number.NaN
  if (!/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(text)) fail(`"${text}" is not a float`)
  return Number(text)
}

function unescapeHelp(text: string, quotes: boolean, fail: (message: string) => never): string {
  return text.replace(/\\(.?)/g, (_, next: string) => {
    if (next === '\\') return '\\'
    if (next === 'n') return '\n'
    if (quotes && next === '"') return '"'
    return fail('bad escape in a help text')
  })
}

/** Per label set (without `le`): buckets cumulative and ascending, `+Inf` present and equal to `_count`. */
function checkHistogram(family: Family): void {
  const groups = new Map<string, { le: number; value: number }[]>()
  const counts = new Map<string, number>()
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels
    const key = JSON.stringify(Object.entries(rest).sort())
    if (sample.name === `${family.name}_bucket`) {
      if (le === undefined) throw new Error(`${family.name}: a bucket without le`)
      groups.set(key, [...(groups.get(key) ?? []), { le: le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), value: sample.value }])
    } else if (sample.name === `${family.name}_count`) counts.set(key, sample.value)
  }
  for (const [key, buckets] of groups) {
    for (let index = 1; index < buckets.length; index++) {
      if (!(buckets[index]!.le > buckets[index - 1]!.le)) throw new Error(`${family.name} ${key}: buckets not ascending by le`)
      if (buckets[index]!.value < buckets[index - 1]!.value) throw new Error(`${family.name} ${key}: buckets not cumulative`)
    }
    const last = buckets.at(-1)!
    if (last.le !== Number.POSITIVE_INFINITY) throw new Error(`${family.name} ${key}: no le="+Inf" bucket`)
    if (counts.get(key) !== last.value) throw new Error(`${family.name} ${key}: _count differs from the +Inf bucket`)
  }
}
