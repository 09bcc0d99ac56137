/**
 * The assistant's replies are Markdown (lists, code, tables, links), rendered as they stream. The
 * model's text is not trusted: raw HTML in it is shown as text, links keep only http(s) and mailto
 * addresses and open in a new tab without a referrer, and images are shown as links (no request
 * leaves the page because a reply named an address). Everything else marked escapes itself.
 */
import { Marked } from "marked"
import { memo } from "react"

const escapeHtml = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;").replaceAll("'", "&#39;")

const safeHref = (href: string): string | undefined => {
  try {
    const url = new URL(href)
    return ["http:", "https:", "mailto:"].includes(url.protocol) ? url.href : undefined
  } catch {
    return undefined
  }
}

const markdown = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    html: ({ text }) => escapeHtml(text),
    // the page has its own h1 and h2: a reply's headings sit below them
    heading({ tokens, depth }) {
      const level = Math.min(6, depth + 2)
      return `<h${level}>${this.parser.parseInline(tokens)}</h${level}>`
    },
    link({ href, tokens }) {
      const label = this.parser.parseInline(tokens)
      const safe = safeHref(href)
      return safe === undefined ? label : `<a href="${escapeHtml(safe)}" target="_blank" rel="noopener noreferrer nofollow">${label}</a>`
    },
    image({ href, text }) {
      const safe = safeHref(href)
      const label = escapeHtml(text === "" ? "image" : text)
      return safe === undefined ? label : `<a href="${escapeHtml(safe)}" target="_blank" rel="noopener noreferrer nofollow">${label}</a>`
    }
  }
})

export const MarkdownText = memo(({ text }: { text: string }) => (
  <div className="markdown" dangerouslySetInnerHTML={{ __html: (markdown.parse(text) as string).trim() }} />
))
