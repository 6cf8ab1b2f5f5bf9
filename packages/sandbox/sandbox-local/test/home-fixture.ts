import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

/**
 * A stand-in for the user's home: harmless dotfiles and one file under every credential path the
 * sandbox must hide, each holding a marker no output may show.
 */

/** What every planted credential file contains: seen in a sandbox's output, it leaked. */
export const SECRET = 'SECRET-CREDENTIAL'

/** One file per credential path (the file itself for file credentials, a file inside for directories). */
export const CREDENTIAL_FILES: Readonly<Record<string, string>> = {
  '.ssh': '.ssh/id_rsa',
  '.aws': '.aws/credentials',
  '.kube': '.kube/config',
  '.docker/config.json': '.docker/config.json',
  '.netrc': '.netrc',
  '.git-credentials': '.git-credentials',
  '.npmrc': '.npmrc',
  '.gnupg': '.gnupg/private-keys-v1.d/key',
  '.config/gcloud': '.config/gcloud/credentials.db',
  '.azure': '.azure/accessTokens.json',
  '.config/gh': '.config/gh/hosts.yml',
  '.mozilla': '.mozilla/firefox/profile/logins.json',
  '.config/google-chrome': '.config/google-chrome/Default/Login Data',
  '.config/chromium': '.config/chromium/Default/Cookies',
}

/** The dotfiles planted, with their content. */
export const DOTFILES: Readonly<Record<string, string>> = {
  '.bashrc': '# the real bashrc\n',
  '.profile': '# the real profile\n',
  '.inputrc': 'set bell-style none\n',
  '.vimrc': 'set nocompatible\n',
  '.gitconfig': '[user]\n\temail = real@example.org\n\tname = Real Name\n',
}

/** Fill `home` with the dotfiles and the credentials. */
export function plantHome(home: string): void {
  for (const [name, content] of Object.entries(DOTFILES)) writeFileSync(join(home, name), content)
  for (const file of Object.values(CREDENTIAL_FILES)) {
    mkdirSync(dirname(join(home, file)), { recursive: true })
    writeFileSync(join(home, file), `${SECRET} ${file}\n`, { mode: 0o600 })
  }
}

/** Every entry under `root` with its kind, mode and content (or link target): equal snapshots mean byte-for-byte unchanged. */
export function snapshot(root: string): Record<string, string> {
  const entries: Record<string, string> = {}
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name)
      const stat = lstatSync(path)
      const mode = (stat.mode & 0o7777).toString(8)
      if (stat.isDirectory()) {
        entries[path] = `dir ${mode}`
        walk(path)
      } else if (stat.isSymbolicLink()) entries[path] = `link ${readlinkSync(path)}`
      else entries[path] = `file ${mode} ${readFileSync(path, 'base64')}`
    }
  }
  walk(root)
  return entries
}
