import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { podmanSecretJson, readKustomization, renderKustomization, takeSecrets } from './render'

// The manifests' promises that containers.test.ts cannot see through podman (kube play ignores
// readiness probes and resources), read from the files, and the renderer the container test uses.
const KUBE_DIR = fileURLToPath(new URL('../../../../deploy/kubernetes/', import.meta.url))
const IMAGE = 'localhost/dsh-terminal-test:render'

/** One document of the rendered file by its `kind:` and `metadata.name`. */
function documentOf(rendered: string, kind: string, name: string): string {
  const found = rendered
    .split(/^---\n/m)
    .find((doc) => new RegExp(`^kind: ${kind}$`, 'm').test(doc) && new RegExp(`^metadata:\\n\\s+name: ${name}$`, 'm').test(doc))
  if (!found) throw new Error(`no ${kind} ${name} in the rendered manifests`)
  return found
}

describe('deploy/kubernetes', () => {
  const rendered = renderKustomization(KUBE_DIR, { image: IMAGE })

  it('the kustomization lists the Secret, the Deployment, the Service and the workspace Pod, and names the image', () => {
    const { resources, imageName } = readKustomization(readFileSync(join(KUBE_DIR, 'kustomization.yaml'), 'utf8'))
    expect(resources).toEqual(['secret.yaml', 'deployment.yaml', 'service.yaml', 'workspace-pod.yaml'])
    expect(imageName).toBe('dsh-terminal')
  })

  it('rendering overrides every image with a local one that is never pulled', () => {
    const images = [...rendered.matchAll(/^\s*image: (\S+)\n\s*imagePullPolicy: (\S+)$/gm)].map((match) => [match[1], match[2]])
    expect(images).toEqual([
      [IMAGE, 'Never'],
      [IMAGE, 'Never'],
    ])
    expect(rendered).not.toMatch(/^\s*image: dsh-terminal\s*$/m)
  })

  it('the Deployment: token from the Secret, probes on /healthz and /readyz, requests and limits, privileged with the reason', () => {
    const deployment = documentOf(rendered, 'Deployment', 'dsh-terminal')
    expect(deployment).toMatch(/name: DSH_TERMINAL_TOKEN\n\s+valueFrom:\n\s+secretKeyRef: \{ name: dsh-terminal-token, key: token \}/)
    expect(deployment).toMatch(/livenessProbe:\n\s+httpGet: \{ path: \/healthz, port: mcp \}/)
    expect(deployment).toMatch(/readinessProbe:\n\s+httpGet: \{ path: \/readyz, port: mcp \}/)
    expect(deployment).toMatch(/resources:\n\s+requests: \{ cpu: \S+, memory: \S+ \}\n\s+limits: \{ cpu: \S+, memory: \S+ \}/)
    expect(deployment).toMatch(/# Why privileged: every session runs in bubblewrap[\s\S]*securityContext:\n\s+privileged: true/)
    expect(deployment).toMatch(/args: \["http"\]/)
  })

  it('the workspace Pod idles as an exec target', () => {
    const pod = documentOf(rendered, 'Pod', 'dsh-workspace-1')
    expect(pod).toMatch(/args: \["target"\]/)
    expect(pod).toContain('connect: [kubectl, exec, -i, dsh-workspace-1, --, dsh-session-host, --stdio]')
  })

  it('takeSecrets lifts the Secret out, and podman gets its values in base64 JSON', () => {
    const { secrets, rest } = takeSecrets(rendered)
    expect(secrets).toEqual([{ name: 'dsh-terminal-token', stringData: { token: 'change-me-to-a-long-random-token' } }])
    expect(rest).not.toMatch(/^kind: Secret$/m)
    expect(rest.split(/^---\n/m)).toHaveLength(3)
    expect(JSON.parse(podmanSecretJson(secrets[0]!))).toEqual({ token: Buffer.from('change-me-to-a-long-random-token').toString('base64') })
  })
})
