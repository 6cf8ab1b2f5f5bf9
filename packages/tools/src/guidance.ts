/** A tool family's short system-prompt text (e.g. "when to use a terminal and how to close it"). */
export interface GuidanceSection {
  /** Stable unique id, e.g. `terminal`; the tiebreak of the render order. */
  id: string
  /** Heading rendered as `## <title>`. */
  title: string
  /** Body text; surrounding whitespace is trimmed. */
  text: string
  /** Sort key, ascending; default 100. Equal orders sort by id, so the output never depends on load order. */
  order?: number
}

/** Default {@link GuidanceSection.order}. */
export const DEFAULT_GUIDANCE_ORDER = 100

/** Sections in render order: by `order`, then by `id` (code-unit order, locale independent). */
export function sortGuidance(sections: Iterable<GuidanceSection>): GuidanceSection[] {
  return [...sections].sort((a, b) => {
    const byOrder = (a.order ?? DEFAULT_GUIDANCE_ORDER) - (b.order ?? DEFAULT_GUIDANCE_ORDER)
    if (byOrder !== 0) return byOrder
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
  })
}

/** Render sections as markdown (`## title` then text, blank line between); '' when there are none. */
export function renderGuidance(sections: Iterable<GuidanceSection>): string {
  return sortGuidance(sections)
    .map((section) => `## ${section.title.trim()}\n${section.text.trim()}`)
    .join('\n\n')
}
