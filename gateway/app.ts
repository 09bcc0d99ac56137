/**
 * The web app (app/, built into app/dist by `npm run build:app`): its hashed files under
 * `/assets/` cached for a year as immutable, and every other GET that is not an API path answered
 * with index.html (never cached), so the app's own routes (deep links such as
 * `/{org}/{ws}/settings/integrations/reauth/{listing}`) load it and it routes in the browser.
 *
 * The files are read once at start and kept in memory with their gzip form: the whole app is a few
 * hundred kilobytes, and a request then costs no disk read and no compression.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { extname, join, relative, sep } from "node:path"
import { gzipSync } from "node:zlib"
import type uWS from "uWebSockets.js"
import { type HttpReply, type HttpRequest, jsonError, route } from "./http.ts"

interface StaticFile {
  readonly type: string
  readonly plain: Buffer
  /** Undefined when compressing does not pay (images). */
  readonly gzip: Buffer | undefined
}

const TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".webmanifest": "application/manifest+json",
  ".txt": "text/plain; charset=utf-8",
  ".woff2": "font/woff2"
}
const COMPRESSIBLE = new Set([".html", ".js", ".css", ".svg", ".json", ".webmanifest", ".txt"])

/** Paths that belong to the API, never to the app: an unknown one stays a JSON 404. */
const API_PREFIXES = ["/v1/", "/api/", "/mcp", "/a2a", "/.well-known/", "/healthz", "/openapi.json", "/metrics", "/assets/"]

const IMMUTABLE = "public, max-age=31536000, immutable"
// the page names the hashed files of the build it came with: always ask whether there is a newer one
const REVALIDATE = "no-cache"

/** The built app's files by URL path, or undefined when `dir` holds no build. */
export const loadApp = (dir: string): ReadonlyMap<string, StaticFile> | undefined => {
  if (!existsSync(join(dir, "index.html"))) return undefined
  const files = new Map<string, StaticFile>()
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name)
      if (statSync(path).isDirectory()) walk(path)
      else {
        const extension = extname(name)
        const plain = readFileSync(path)
        files.set(`/${relative(dir, path).split(sep).join("/")}`, {
          type: TYPES[extension] ?? "application/octet-stream",
          plain,
          gzip: COMPRESSIBLE.has(extension) ? gzipSync(plain, { level: 9 }) : undefined
        })
      }
    }
  }
  walk(dir)
  return files
}

const acceptsGzip = (req: HttpRequest) => /\bgzip\b/.test(req.headers["accept-encoding"] ?? "")

const fileReply = (req: HttpRequest, file: StaticFile, cacheControl: string): HttpReply => {
  const gzip = file.gzip !== undefined && acceptsGzip(req)
  const headers: Record<string, string> = { "content-type": file.type, "cache-control": cacheControl, vary: "Accept-Encoding", "x-content-type-options": "nosniff" }
  if (gzip) headers["content-encoding"] = "gzip"
  if (file.type.startsWith("text/html")) {
    // the app loads only its own bundled files and talks only to this origin
    headers["content-security-policy"] =
      "default-src 'self'; img-src 'self' data: https:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'"
    headers["referrer-policy"] = "same-origin"
  }
  return { status: 200, headers, body: gzip ? file.gzip : file.plain }
}

/**
 * Serves the app from `files` (loadApp). With no build, `/` says how to make one instead of a
 * blank 404, and API paths keep their JSON 404.
 */
export const appRoutes = (app: uWS.TemplatedApp, files: ReadonlyMap<string, StaticFile> | undefined): void => {
  route(app, "get", "/*", async (req) => {
    const file = files?.get(req.url)
    if (file !== undefined && req.url !== "/index.html") return fileReply(req, file, req.url.startsWith("/assets/") ? IMMUTABLE : REVALIDATE)
    if (API_PREFIXES.some((prefix) => req.url.startsWith(prefix))) return jsonError(404, "not_found", `no route ${req.method} ${req.url}`, "route_not_found")
    const index = files?.get("/index.html")
    if (index === undefined) {
      return { status: 404, text: "The web app is not built: run `npm run build:app`, then reload this page.\n", headers: { "cache-control": "no-store" } }
    }
    return fileReply(req, index, REVALIDATE)
  })
}
