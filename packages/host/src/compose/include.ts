import Include from '@deepseek-ai/cordis-plugin-include'
import type { PluginImporter } from './builtins'

/**
 * An `Include` that never writes the file back and resolves family package names through
 * `builtins` first. The stock include rewrites the user's cordis.yml whenever a plugin's config is
 * updated or a plugin disposes itself (comments lost, `disabled: true` added); a host must not.
 * Nested includes (overlays in examples/) use the same class through the loader's `include` builtin.
 */
export function readOnlyInclude(builtins: Readonly<Record<string, PluginImporter>>): typeof Include {
  return class ReadOnlyInclude extends Include {
    /** Never persist: the file belongs to the user. */
    override write(): void {}

    /** Family packages from `builtins`, then the loader's own builtins, then a normal import. */
    override import(name: string, getOuterStack?: () => string[]) {
      const importer = Object.hasOwn(builtins, name) ? builtins[name] : undefined
      if (importer) return importer()
      return this.ctx.loader.builtins[name] ?? super.import(name, getOuterStack)
    }
  }
}
