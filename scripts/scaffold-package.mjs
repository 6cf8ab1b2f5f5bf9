// Generator for a new package: writes a package.json with the house layout and, when there is none
// yet, a README.md on the house template (the sections `pnpm docs:check` requires, see
// scripts/docs/readme-template.ts). Usage: node scripts/scaffold-package.mjs <dir> <name> "<description>" dep1,dep2
import { existsSync, writeFileSync, mkdirSync } from 'node:fs'
import { join, relative } from 'node:path'

const [dir, name, description, deps = ''] = process.argv.slice(2)
const workspace = deps.split(',').filter(Boolean)
const external = { '@deepseek-ai/cordis': '^4.0.4', zod: '^4.1.0', 'node-pty': '1.2.0-beta.15' }
const dependencies = {}
const peerDependencies = {}
const devDependencies = {}
for (const dep of workspace) {
  if (dep === '@deepseek-ai/cordis') {
    peerDependencies[dep] = external[dep]
    devDependencies[dep] = '4.0.4'
  } else if (external[dep]) dependencies[dep] = external[dep]
  else dependencies[dep] = 'workspace:^'
}
const pkg = {
  name,
  version: '0.0.0',
  description,
  type: 'module',
  license: 'MIT',
  engines: { node: '>=20.11' },
  exports: {
    '.': { 'dsh-source': './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' },
    './package.json': './package.json',
  },
  main: './dist/index.js',
  types: './dist/index.d.ts',
  files: ['dist', 'src', 'README.md', 'LICENSE'],
  repository: { type: 'git', url: 'git+https://github.com/dsh-terminal/dsh-terminal.git', directory: relative('.', dir) },
  scripts: {
    build: 'tsup src/index.ts --format esm --dts --clean --tsconfig ' + join(relative(dir, '.'), 'tsconfig.build.json'),
    prepack: 'node ' + join(relative(dir, '.'), 'scripts/prepack.mjs'),
  },
  dependencies,
  peerDependencies,
  devDependencies,
}
for (const key of ['dependencies', 'peerDependencies', 'devDependencies']) if (!Object.keys(pkg[key]).length) delete pkg[key]
mkdirSync(join(dir, 'src'), { recursive: true })
writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2) + '\n')

/** The README template: title, what it is for, Use it, Configuration, Errors, Limits. */
function readmeTemplate(packageName, summary) {
  return `# ${packageName}

${summary || 'What this package is for, in one paragraph.'}

## Use it

\`\`\`yaml
# cordis.yml
- id: ${packageName.replace(/^dsh-/, '')}
  name: ${packageName}
\`\`\`

## Configuration

| key | default | meaning |
|---|---|---|

## Errors

| code | when |
|---|---|

## Limits

- What it does not do, and why.
`
}

if (!existsSync(join(dir, 'README.md'))) writeFileSync(join(dir, 'README.md'), readmeTemplate(name, description))
