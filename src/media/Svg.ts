/**
 * SVG the platform stores (spec issue 14, `svg.generate`): whatever wrote it, a model or the
 * offline renderer, it is sanitized before it is kept, since a browser opening the file runs what
 * it holds. An allowlist (`sanitize-html` in XML mode): drawing elements and presentation
 * attributes only; no `script`, `foreignObject`, `style` element, event handler (`on*`), and no
 * reference out of the document: `href`/`xlink:href` only to a fragment (`#id`), `url(...)` in an
 * attribute only to a fragment, so `use`, gradients and patterns still work inside the file.
 */
import sanitizeHtml from "sanitize-html"

const drawingElements = [
  "svg", "g", "defs", "symbol", "use", "title", "desc",
  "path", "rect", "circle", "ellipse", "line", "polyline", "polygon",
  "text", "tspan", "textPath",
  "linearGradient", "radialGradient", "stop", "pattern", "clipPath", "mask", "marker"
]

const presentationAttributes = [
  "id", "class", "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry", "width", "height",
  "d", "points", "transform", "viewBox", "preserveAspectRatio", "xmlns", "version",
  "fill", "fill-opacity", "fill-rule", "stroke", "stroke-width", "stroke-opacity", "stroke-linecap",
  "stroke-linejoin", "stroke-dasharray", "opacity", "font-family", "font-size", "font-weight",
  "text-anchor", "dominant-baseline", "offset", "stop-color", "stop-opacity", "gradientUnits",
  "gradientTransform", "patternUnits", "clip-path", "clipPathUnits", "mask", "marker-start",
  "marker-mid", "marker-end", "markerWidth", "markerHeight", "refX", "refY", "orient", "dx", "dy",
  "href", "xlink:href", "xmlns:xlink"
]

/** Attributes whose value may be `url(...)`: only `url(#fragment)` stays. */
const urlValue = /url\s*\(/i
const fragmentUrlOnly = /^\s*url\(\s*['"]?#[\w.-]+['"]?\s*\)\s*$/i

const keepOnlyLocalReferences = (attribs: Record<string, string>): Record<string, string> => {
  const kept: Record<string, string> = {}
  for (const [name, value] of Object.entries(attribs)) {
    if ((name === "href" || name === "xlink:href") && !/^#[\w.-]+$/.test(value.trim())) continue
    if (urlValue.test(value) && !fragmentUrlOnly.test(value)) continue
    kept[name] = value
  }
  return kept
}

const NAMESPACE = "http://www.w3.org/2000/svg"

/** The SVG with everything that could run or fetch removed; the root carries the SVG namespace. */
export const sanitizeSvg = (svg: string): string => {
  const clean = sanitizeHtml(svg, {
    allowedTags: drawingElements,
    allowedAttributes: Object.fromEntries(drawingElements.map((tag) => [tag, presentationAttributes])),
    // `href` values are judged by keepOnlyLocalReferences; no scheme is needed for `#id`
    allowedSchemes: [],
    allowedSchemesAppliedToAttributes: [],
    allowProtocolRelative: false,
    // script/style bodies are dropped with their element, not kept as text
    nonTextTags: ["script", "style", "foreignObject", "textarea", "noscript", "iframe"],
    parser: { xmlMode: true, lowerCaseTags: false, lowerCaseAttributeNames: false },
    // none: a self-closing tag would be written without its children; `<rect></rect>` is valid XML
    selfClosing: [],
    transformTags: Object.fromEntries(
      drawingElements.map((tag) => [tag, (tagName: string, attribs: Record<string, string>) => ({ tagName, attribs: keepOnlyLocalReferences(attribs) })])
    )
  })
  const start = clean.search(/<svg\b/)
  const end = clean.lastIndexOf("</svg>")
  if (start < 0 || end < start) return `<svg xmlns="${NAMESPACE}"></svg>`
  // only the root element: text around it (a doctype's leftovers) is no part of the picture
  const root = clean.slice(start, end + "</svg>".length)
  return /^<svg\b[^>]*\sxmlns=/.test(root) ? root : root.replace(/^<svg\b/, `<svg xmlns="${NAMESPACE}"`)
}

/** A few stable numbers from the prompt, so the same prompt draws the same picture. */
export const promptSeed = (prompt: string): ReadonlyArray<number> => {
  const bytes: Array<number> = []
  let h = 2166136261
  for (let i = 0; i < 32; i++) {
    for (const ch of `${i}:${prompt}`) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0
    bytes.push(h & 0xff)
  }
  return bytes
}

const escapeXml = (s: string) => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** The offline writer: a deterministic composition from the prompt (shapes and colours from its
 * seed, the prompt as the title), so the pack works with no model configured. */
export const renderPromptSvg = (prompt: string, width: number, height: number): string => {
  const seed = promptSeed(prompt)
  const colour = (i: number) => `rgb(${seed[i]},${seed[i + 1]},${seed[i + 2]})`
  const shapes = [0, 1, 2, 3].map((k) => {
    const s = seed.slice(6 + k * 6)
    const cx = Math.round((s[0] / 255) * width)
    const cy = Math.round((s[1] / 255) * height)
    const r = Math.round(((s[2] / 255) * Math.min(width, height)) / 3) + 4
    return `<circle cx="${cx}" cy="${cy}" r="${r}" fill="${colour(6 + k * 6 + 3)}" fill-opacity="0.7"/>`
  })
  return [
    `<svg xmlns="${NAMESPACE}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
    `<title>${escapeXml(prompt)}</title>`,
    `<rect width="${width}" height="${height}" fill="${colour(0)}"/>`,
    ...shapes,
    `</svg>`
  ].join("")
}
