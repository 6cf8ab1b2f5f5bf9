import { type Context, Service } from '@deepseek-ai/cordis'
import { isTool, type Tool } from './define'
import { ToolError } from './errors'
import { type GuidanceSection, renderGuidance, sortGuidance } from './guidance'
import { type MutableToolCallEvent, notifyAfter, notifyBefore, type ToolCallObserver } from './observe'
import { parseArguments, presentCall, runTool, textContent } from './run'
import type { ToolExecuteRequest, ToolInfo, ToolPresentation, ToolResult } from './types'
import { keepUtf8Head } from 'dsh-basics'
import { directCalls } from 'dsh-agent'

declare module '@deepseek-ai/cordis' {
  interface Context {
    /** Tool registry and call pipeline (plugin `dsh-tools`). */
    tools: ToolService
  }
}

/** Bytes of a model-supplied tool name echoed back in an UNKNOWN_TOOL message. */
const MAX_ECHOED_NAME_BYTES = 128

/**
 * `ctx.tools`: the tools a model may call, their JSON Schemas, the call pipeline, and the
 * system-prompt guidance of each tool family. Registrations belong to the calling plugin.
 */
export class ToolService extends Service {
  private readonly tools = new Map<string, Tool>()
  private readonly sections = new Map<string, GuidanceSection>()
  private readonly observers = new Set<ToolCallObserver>()

  constructor(ctx: Context) {
    super(ctx, 'tools')
    // Every tool call passes through here: no shadow context per call (`this.ctx` stays the caller's).
    directCalls(this)
  }

  /**
   * Make a tool callable until the returned disposer runs or the calling plugin unloads
   * (the registration is an effect on the caller's context). Throws `DUPLICATE_TOOL` for a taken name.
   */
  register(tool: Tool): () => Promise<void> {
    if (!isTool(tool)) throw new ToolError('INVALID_TOOL', 'ctx.tools.register() takes a tool made by defineTool()')
    this.assertFreeName(tool.name)
    return this.ctx.effect(
      () => {
        this.assertFreeName(tool.name)
        this.tools.set(tool.name, tool)
        return () => {
          if (this.tools.get(tool.name) === tool) this.tools.delete(tool.name)
        }
      },
      `tools.register(${JSON.stringify(tool.name)})`,
    )
  }

  /** The registered tool called `name`, if any. */
  get(name: string): Tool | undefined {
    return this.tools.get(name)
  }

  /** Name, description and JSON Schema of every registered tool, sorted by name (a stable prompt). */
  list(): ToolInfo[] {
    return [...this.tools.values()]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema as Record<string, unknown> }))
  }

  /**
   * The per-call presentation intent, for a host to show a call before it runs. Unknown tools and
   * invalid arguments get defaults (kind `other` / the tool's kind, title = name, rawInput = arguments).
   */
  describeCall(request: Pick<ToolExecuteRequest, 'name' | 'arguments'>): ToolPresentation {
    const tool = this.tools.get(request.name)
    if (!tool) return { kind: 'other', title: String(request.name), rawInput: request.arguments }
    const parsed = parseArguments(tool, request.arguments)
    return parsed.ok ? presentCall(tool, parsed.value, true) : presentCall(tool, parsed.input, false)
  }

  /**
   * Watch every call until the returned disposer runs or the calling plugin unloads (an effect on the
   * caller's context, as `register`): `beforeCall` right before a known tool runs with valid
   * arguments (awaited), `afterCall` with every final result. Observers cannot change or fail a call.
   */
  observe(observer: ToolCallObserver): () => Promise<void> {
    if (typeof observer !== 'object' || observer === null)
      throw new ToolError('INVALID_OBSERVER', 'ctx.tools.observe() takes an object with beforeCall and/or afterCall')
    const entry: ToolCallObserver = { ...observer }
    return this.ctx.effect(() => {
      this.observers.add(entry)
      return () => void this.observers.delete(entry)
    }, 'tools.observe()')
  }

  /**
   * Run one tool call. Always resolves: unknown tools, invalid arguments, a missing agent and thrown
   * errors all become one `Error: <message>` block with `isError` and a coded `error`.
   */
  async execute(request: ToolExecuteRequest): Promise<ToolResult> {
    if (this.observers.size === 0) return this.run(request)
    const observers = [...this.observers]
    const started = performance.now()
    const call: MutableToolCallEvent = {
      callId: request.callId,
      name: request.name,
      agent: request.agent,
      arguments: request.arguments,
      valid: false,
      startedAt: Date.now(),
    }
    // Without a beforeCall the call is not held up by even a microtask.
    const waits = observers.some((observer) => observer.beforeCall)
    const result = await this.run(request, (args) => {
      call.arguments = args
      call.valid = true
      return waits ? notifyBefore(observers, call) : undefined
    })
    notifyAfter(observers, call, result, performance.now() - started)
    return result
  }

  private async run(request: ToolExecuteRequest, before?: (args: Record<string, unknown>) => Promise<void> | undefined): Promise<ToolResult> {
    const tool = this.tools.get(request.name)
    if (tool) return runTool(tool, request, before)
    const shown = JSON.stringify(keepUtf8Head(String(request.name), MAX_ECHOED_NAME_BYTES))
    const names = [...this.tools.keys()].sort()
    const message = names.length ? `unknown tool ${shown}; available tools: ${names.join(', ')}` : `unknown tool ${shown}; no tools are registered`
    return {
      callId: request.callId,
      name: request.name,
      content: [textContent(`Error: ${message}`)],
      isError: true,
      error: { code: 'UNKNOWN_TOOL', message },
      presentation: { kind: 'other', title: String(request.name), rawInput: request.arguments },
    }
  }

  /**
   * Add a tool family's system-prompt section until the returned disposer runs or the calling
   * plugin unloads. Throws `DUPLICATE_GUIDANCE` for a taken id.
   */
  registerGuidance(section: GuidanceSection): () => Promise<void> {
    for (const key of ['id', 'title', 'text'] as const) {
      if (typeof section?.[key] !== 'string' || !section[key].trim()) {
        throw new ToolError('INVALID_GUIDANCE', `guidance section needs a non-empty ${key}`)
      }
    }
    if (section.order !== undefined && !Number.isFinite(section.order)) {
      throw new ToolError('INVALID_GUIDANCE', `guidance section "${section.id}" has a non-finite order`)
    }
    const copy = { ...section }
    this.assertFreeSection(copy.id)
    return this.ctx.effect(
      () => {
        this.assertFreeSection(copy.id)
        this.sections.set(copy.id, copy)
        return () => {
          if (this.sections.get(copy.id) === copy) this.sections.delete(copy.id)
        }
      },
      `tools.registerGuidance(${JSON.stringify(copy.id)})`,
    )
  }

  /** Registered guidance sections in render order. */
  guidance(): GuidanceSection[] {
    return sortGuidance(this.sections.values()).map((section) => ({ ...section }))
  }

  /** The system-prompt text: every section as `## title\ntext`, in a stable order; '' when none. */
  renderGuidance(): string {
    return renderGuidance(this.sections.values())
  }

  private assertFreeName(name: string): void {
    if (this.tools.has(name)) throw new ToolError('DUPLICATE_TOOL', `a tool named "${name}" is already registered`)
  }

  private assertFreeSection(id: string): void {
    if (this.sections.has(id)) throw new ToolError('DUPLICATE_GUIDANCE', `a guidance section with id "${id}" is already registered`)
  }
}
