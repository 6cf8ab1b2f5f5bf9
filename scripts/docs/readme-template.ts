/**
 * Every package README follows one template (the one `scripts/scaffold-package.mjs` writes): the
 * package name as its title, a paragraph saying what it is for, then `Use it` first; `Configuration`
 * when the package exports a `Config`, `Errors` when it exports an error class, and `Limits`. A
 * reader finds the same thing under the same heading in every package; `docs:check` holds them to it.
 */

/** The `##` headings the template requires, in the words a heading must start with. */
const README_SECTIONS = {
  use: 'Use it',
  configuration: 'Configuration',
  errors: 'Errors',
  limits: 'Limits',
} as const

/** What the template asks of one package's README. */
export interface ReadmeExpectation {
  /** The package name: the README's title. */
  readonly name: string
  /** It exports a `Config` schema: a `Configuration` section is required. */
  readonly hasConfig: boolean
  /** It exports an error class (a name ending in `Error`): an `Errors` section is required. */
  readonly hasErrors: boolean
}

/** One message per way `readme` departs from the template (empty when it follows it). */
export function readmeTemplateProblems(readme: string, expected: ReadmeExpectation): string[] {
  const problems: string[] = []
  const lines = readme.split('\n')
  if (lines[0] !== `# ${expected.name}`) problems.push(`its first line must be the title \`# ${expected.name}\``)
  const firstSection = lines.findIndex((line) => line.startsWith('## '))
  const intro = lines
    .slice(1, firstSection === -1 ? lines.length : firstSection)
    .filter((line) => line.trim() !== '' && !line.startsWith('#') && !line.startsWith('<!--'))
  if (intro.length === 0) problems.push('a paragraph saying what the package is for must follow the title')
  const sections = headings(lines)
  const required = [
    README_SECTIONS.use,
    ...(expected.hasConfig ? [README_SECTIONS.configuration] : []),
    ...(expected.hasErrors ? [README_SECTIONS.errors] : []),
    README_SECTIONS.limits,
  ]
  for (const section of required) {
    if (!sections.some((heading) => startsWithWord(heading, section))) problems.push(`it has no \`## ${section}\` section`)
  }
  if (sections.length > 0 && !startsWithWord(sections[0]!, README_SECTIONS.use)) {
    problems.push(`its first section must be \`## ${README_SECTIONS.use}\` (it is \`## ${sections[0]}\`)`)
  }
  return problems
}

/** The `##` headings outside fenced code blocks, in order. */
function headings(lines: readonly string[]): string[] {
  const found: string[] = []
  let fenced = false
  for (const line of lines) {
    if (line.startsWith('```')) fenced = !fenced
    else if (!fenced && line.startsWith('## ')) found.push(line.slice(3).trim())
  }
  return found
}

/** `heading` is `section` or starts with it followed by a non-word character (`Errors (…)`, `Limits: …`). */
function startsWithWord(heading: string, section: string): boolean {
  return heading === section || (heading.startsWith(section) && /^\W/.test(heading.slice(section.length)))
}
