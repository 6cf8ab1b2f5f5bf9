import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The tests' stand-in for `kustomize build` (Podman 4.3 cannot read a kustomization): the listed
 * `resources` concatenated into one multi-document YAML, with the kustomization's image name
 * replaced by a local image that is never pulled. `patch` edits the text of each resource after.
 */
export interface RenderOptions {
  /** The image every `image: <kustomization images[].name>` becomes, e.g. `localhost/dsh-terminal-test:abc`. */
  image: string
  /** A test's own edit of one resource (publishing a port, the Secret's value). */
  patch?: (file: string, text: string) => string
}

/** The `resources:` list and the first `images[].name` of a kustomization, read line by line. */
export function readKustomization(text: string): { resources: string[]; imageName: string } {
  const resources: string[] = []
  let section = ''
  let imageName = ''
  for (const line of text.split('\n')) {
    if (/^\S/.test(line)) section = line.replace(/:.*$/, '')
    const item = /^\s*-\s+(\S+)\s*$/.exec(line)
    if (section === 'resources' && item) resources.push(item[1]!)
    const name = /^\s*-\s*name:\s*(\S+)\s*$/.exec(line)
    if (section === 'images' && name && !imageName) imageName = name[1]!
  }
  if (!resources.length || !imageName) throw new Error('kustomization.yaml needs a resources list and an images entry')
  return { resources, imageName }
}

/** Render the kustomization in `dir` (see {@link RenderOptions}). */
export function renderKustomization(dir: string, options: RenderOptions): string {
  const { resources, imageName } = readKustomization(readFileSync(join(dir, 'kustomization.yaml'), 'utf8'))
  const imageLine = new RegExp(`^(\\s*)image: ${imageName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`, 'gm')
  return resources
    .map((file) => {
      const text = readFileSync(join(dir, file), 'utf8').replace(imageLine, `$1image: ${options.image}\n$1imagePullPolicy: Never`)
      return options.patch ? options.patch(file, text) : text
    })
    .map((text) => (text.endsWith('\n') ? text : `${text}\n`))
    .join('---\n')
}

/** A Secret taken out of a rendered file: its name and its `stringData` (our secret.yaml's form). */
export interface RenderedSecret {
  readonly name: string
  readonly stringData: Readonly<Record<string, string>>
}

/**
 * Split the Secrets out of a rendered file. Podman 4.3's kube play stores a Secret document as YAML
 * but reads `secretKeyRef` values as JSON ("secret … is not valid JSON"), so the tests create each
 * Secret with `podman secret create` from {@link podmanSecretJson} and play the rest.
 */
export function takeSecrets(rendered: string): { secrets: RenderedSecret[]; rest: string } {
  const secrets: RenderedSecret[] = []
  const kept: string[] = []
  for (const doc of rendered.split(/^---\n/m)) {
    if (!/^kind:\s*Secret\s*$/m.test(doc)) {
      kept.push(doc)
      continue
    }
    const name = /^metadata:\n\s+name:\s*(\S+)/m.exec(doc)?.[1]
    const block = /^stringData:\n((?:[ \t]+.*\n?)+)/m.exec(doc)?.[1]
    if (!name || !block) throw new Error(`a Secret needs metadata.name and stringData:\n${doc}`)
    const stringData = Object.fromEntries(
      block
        .split('\n')
        .map((line) => /^\s+([\w.-]+):\s*(\S+)\s*$/.exec(line))
        .filter((match): match is RegExpExecArray => match !== null)
        .map((match) => [match[1]!, match[2]!]),
    )
    secrets.push({ name, stringData })
  }
  return { secrets, rest: kept.join('---\n') }
}

/** The JSON Podman 4.3 reads a `secretKeyRef` from: every key with its value in base64. */
export function podmanSecretJson(secret: RenderedSecret): string {
  return JSON.stringify(Object.fromEntries(Object.entries(secret.stringData).map(([key, value]) => [key, Buffer.from(value).toString('base64')])))
}
