/**
 * A catalog server's README (spec 6.3.4): read from its repository's raw files on GitHub, the one
 * supported host (others yield no README), rendered from Markdown with `marked`, sanitized with a
 * strict allowlist (`sanitize-html`: no scripts, styles, iframes, event handlers or `javascript:`
 * URLs), relative image URLs made absolute; cached in the catalog and read again after 24 hours.
 */
import { Clock, Effect } from "effect"
import { randomUUID } from "node:crypto"
import { marked } from "marked"
import sanitizeHtml from "sanitize-html"
import { RegistryActor } from "../../actors/registry/actor.ts"
import { RecordReadme } from "../../actors/registry/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { request } from "../platform/Outbound.ts"
import { RegistrySettings } from "./RegistrySettings.ts"

/** Spec 8: a README is read again once this old. */
export const README_REFETCH_MS = 24 * 60 * 60 * 1000
const TIMEOUT_MS = 10_000
const MAX_README_BYTES = 1024 * 1024

/** Where a repository's files are: its raw base (images) and its page base (links); undefined off GitHub. */
export const readmeSourceOf = (repository: unknown, rawBaseUrl: string): { readonly readmeUrl: string; readonly rawDir: string; readonly pageDir: string } | undefined => {
  if (typeof repository !== "object" || repository === null) return undefined
  const { url, source, subfolder } = repository as { url?: unknown; source?: unknown; subfolder?: unknown }
  if (typeof url !== "string" || (source !== undefined && source !== "github")) return undefined
  const match = /^https:\/\/github\.com\/([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)(?:\.git)?\/?$/.exec(url)
  if (match === null) return undefined
  const [, owner, repo] = match
  const folder = typeof subfolder === "string" ? subfolder.split("/").filter((s) => s !== "" && s !== "." && s !== "..").map(encodeURIComponent).join("/") : ""
  const dir = folder === "" ? "" : `${folder}/`
  const rawDir = `${rawBaseUrl.replace(/\/+$/, "")}/${owner}/${repo}/HEAD/${dir}`
  return { readmeUrl: `${rawDir}README.md`, rawDir, pageDir: `https://github.com/${owner}/${repo}/blob/HEAD/${dir}` }
}

const absolute = (value: string, base: string) => (URL.canParse(value, base) ? new URL(value, base).toString() : value)
const isRelative = (value: string) => !/^[a-z][a-z0-9+.-]*:/i.test(value) && !value.startsWith("//") && !value.startsWith("#")

/** Markdown to sanitized HTML; relative image sources resolve against `rawDir`, relative links against `pageDir`. */
export const renderReadme = (markdown: string, dirs: { readonly rawDir: string; readonly pageDir: string }): string => {
  const html = marked.parse(markdown, { async: false, gfm: true })
  return sanitizeHtml(html, {
    allowedTags: [
      "h1", "h2", "h3", "h4", "h5", "h6", "p", "br", "hr", "blockquote", "pre", "code", "em", "strong", "del", "s", "sup", "sub",
      "ul", "ol", "li", "a", "img", "table", "thead", "tbody", "tr", "th", "td", "details", "summary", "kbd", "input"
    ],
    allowedAttributes: {
      a: ["href", "title", "rel"],
      img: ["src", "alt", "title", "width", "height"],
      th: ["align"],
      td: ["align"],
      code: ["class"],
      ol: ["start"],
      input: ["type", "checked", "disabled"]
    },
    allowedClasses: { code: [/^language-[\w-]+$/] },
    allowedSchemes: ["http", "https", "mailto"],
    allowedSchemesByTag: { img: ["http", "https"] },
    allowProtocolRelative: false,
    // task-list checkboxes only, and inert
    exclusiveFilter: (frame) => frame.tag === "input" && frame.attribs.type !== "checkbox",
    transformTags: {
      img: (tagName, attribs) => ({ tagName, attribs: attribs.src !== undefined && isRelative(attribs.src) ? { ...attribs, src: absolute(attribs.src, dirs.rawDir) } : attribs }),
      a: (tagName, attribs) => ({
        tagName,
        attribs: { ...attribs, ...(attribs.href !== undefined && isRelative(attribs.href) ? { href: absolute(attribs.href, dirs.pageDir) } : {}), rel: "noopener noreferrer nofollow" }
      }),
      input: (tagName, attribs) => ({ tagName, attribs: { ...attribs, disabled: "" } })
    }
  })
}

export interface CachedReadme {
  readonly readmeHtml: string | null
  readonly fetchedAt: string | null
}

/**
 * The README of a catalog server: the cached one while younger than 24 hours, else read again and
 * recorded. A repository without one (404), or off GitHub, is recorded as none; a failed read
 * leaves what was cached.
 */
export const readmeOf = (server: { readonly registryId: string; readonly serverId: string; readonly repository: unknown }, cached: CachedReadme) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    if (cached.fetchedAt !== null && now - Date.parse(cached.fetchedAt) < README_REFETCH_MS) return cached
    const settings = yield* RegistrySettings
    const source = readmeSourceOf(server.repository, settings.githubRawBaseUrl)
    const fetched = source === undefined
      ? Effect.succeed<string | null>(null)
      : request({ url: source.readmeUrl, method: "GET", headers: { accept: "text/plain" }, timeoutMs: TIMEOUT_MS, maxResponseBytes: MAX_README_BYTES }).pipe(
          Effect.flatMap((response) =>
            response.status === 404
              ? Effect.succeed(null)
              : response.status >= 200 && response.status < 300
                ? Effect.succeed(renderReadme(response.body.toString("utf8"), source))
                : Effect.fail(response.status)
          )
        )
    const html = yield* Effect.either(fetched)
    if (html._tag === "Left") {
      yield* Effect.logWarning(`marketplace: the README of ${server.serverId} could not be read`, html.left)
      return cached
    }
    const host = yield* ActorHost
    const at = new Date(now).toISOString()
    yield* host.send(
      RegistryActor,
      server.registryId,
      new RecordReadme({ registryId: server.registryId, serverId: server.serverId, readmeHtml: html.right }),
      { commandId: randomUUID(), at, actor: "system" }
    )
    return { readmeHtml: html.right, fetchedAt: at }
  })
