/**
 * A local MCP registry speaking the two routes of the registry API v0.1 (spec 4.6) over the real
 * public seed of the official registry (`test/fixtures/mcp-registry-seed-2025-05-16.json`, 471
 * records in the registry's early shape), converted to `{ server, _meta }`; or over synthetic
 * servers for the bench. Tests change it as upstream would change: new versions, deletions,
 * `isSecret` flags, edited servers (each change moves `updatedAt`), and a page that fails on demand.
 * It also serves repositories' raw files (`/raw/<owner>/<repo>/HEAD/<path>`), standing in for
 * GitHub's raw host when the node's `GITHUB_RAW_BASE_URL` points at `<url>/raw`.
 */
import { readFileSync } from "node:fs"
import http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const SEED_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/mcp-registry-seed-2025-05-16.json")

/** Where the official registry nests its metadata in `_meta`. */
export const OFFICIAL_META = "io.modelcontextprotocol.registry/official"

export interface RegistryMeta {
  status: "active" | "deprecated" | "deleted"
  statusMessage?: string
  statusChangedAt: string
  publishedAt: string
  updatedAt: string
  isLatest: boolean
}

/** One server version as the registry holds it (`server` is the v0.1 `server.json`). */
export interface RegistryEntry {
  server: Record<string, any>
  meta: RegistryMeta
}

export interface ListedRequest {
  readonly path: string
  readonly query: Readonly<Record<string, string>>
  readonly status: number
}

export interface RegistryServer {
  /** The registry's base URL (the routes are under `/v0.1`). */
  readonly url: string
  /** The base URL of its raw-file host (for `GITHUB_RAW_BASE_URL`). */
  readonly rawBaseUrl: string
  /** Every version held, deleted ones included. */
  readonly entries: () => ReadonlyArray<RegistryEntry>
  /** Every request answered, in order. */
  readonly requests: ReadonlyArray<ListedRequest>
  /** A new version of `name`, which becomes its latest; `changes` edit the copied `server.json`. */
  readonly addVersion: (name: string, version: string, changes?: Record<string, unknown>) => RegistryEntry
  /** Marks a version (default: the latest) deleted. */
  readonly markDeleted: (name: string, version?: string) => RegistryEntry
  /** Flags a package environment variable (or remote header) of a version (default: latest) as secret. */
  readonly setSecret: (name: string, variable: string, isSecret?: boolean, version?: string) => RegistryEntry
  /** Edits a version's (default: latest) `server.json` fields. */
  readonly change: (name: string, changes: Record<string, unknown>, version?: string) => RegistryEntry
  /** The `nth` list request from now (1: the next one) answers `status` instead of a page. */
  readonly failListRequest: (nth: number, status?: number) => void
  /** Every answer from now waits `ms` first (0: none), as a slow registry would. */
  readonly setDelay: (ms: number) => void
  /** Serves `markdown` as the README of `<owner>/<repo>` (at `HEAD/README.md`). */
  readonly setReadme: (repository: string, markdown: string) => void
  readonly close: () => Promise<void>
}

export interface RegistryServerOptions {
  /** Synthetic servers instead of the seed: `servers` names with `versions` versions each. */
  readonly synthetic?: { readonly servers: number; readonly versions: number }
  /** The largest `limit` honoured (the official registry's is 100). */
  readonly maxLimit?: number
}

/** Variables whose names say they hold a credential; the seed has no `isSecret` flags of its own. */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL/i

const REGISTRY_TYPES: Readonly<Record<string, string>> = { npm: "npm", pypi: "pypi", docker: "oci" }
const RUNTIME_HINTS: Readonly<Record<string, string>> = { npm: "npx", pypi: "uvx", oci: "docker" }

/** One record of the seed in the v0.1 shape. Blank records (no name, no version) stay blank. */
export const fromSeedRecord = (record: any): RegistryEntry => {
  const released = record.version_detail?.release_date || "2025-05-16T00:00:00Z"
  const repository = record.repository?.url ? { url: record.repository.url, source: record.repository.source, id: record.repository.id } : undefined
  const packages = (record.packages ?? []).map((p: any) => {
    const registryType = REGISTRY_TYPES[p.registry_name] ?? p.registry_name
    return {
      registryType,
      identifier: p.name,
      version: p.version,
      transport: { type: "stdio" },
      ...(RUNTIME_HINTS[registryType] === undefined ? {} : { runtimeHint: RUNTIME_HINTS[registryType] }),
      environmentVariables: (p.environment_variables ?? []).map((v: any) => ({
        name: v.name,
        description: v.description,
        isRequired: true,
        isSecret: SECRET_NAME.test(v.name)
      })),
      packageArguments: (p.package_arguments ?? []).map((a: any) => ({
        type: a.type,
        ...(a.name === undefined ? {} : { name: a.name }),
        value: a.value,
        description: a.description,
        isRequired: a.is_required ?? false,
        format: a.format ?? "string",
        ...(a.value_hint === undefined ? {} : { valueHint: a.value_hint })
      }))
    }
  })
  const remotes = (record.remotes ?? []).map((r: any) => ({
    type: r.transport_type === "sse" || (r.transport_type === "" && r.url.endsWith("/sse")) ? "sse" : "streamable-http",
    url: r.url
  }))
  return {
    server: {
      $schema: "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
      name: record.name,
      description: record.description,
      version: record.version_detail?.version ?? "",
      ...(repository === undefined ? {} : { repository }),
      ...(packages.length === 0 ? {} : { packages }),
      ...(remotes.length === 0 ? {} : { remotes })
    },
    meta: { status: "active", statusChangedAt: released, publishedAt: released, updatedAt: released, isLatest: record.version_detail?.is_latest ?? false }
  }
}

export const seedEntries = (): Array<RegistryEntry> => (JSON.parse(readFileSync(SEED_PATH, "utf8")) as Array<unknown>).map(fromSeedRecord)

const WORDS = ["weather", "github", "postgres", "slack", "calendar", "search", "files", "browser", "notion", "maps", "email", "finance", "vector", "docs", "image", "audio"]

/** `servers` names with `versions` versions each (the last one latest), some with secrets and remotes. */
export const syntheticEntries = (servers: number, versions: number): Array<RegistryEntry> => {
  const entries: Array<RegistryEntry> = []
  const at = "2025-06-01T00:00:00.000Z"
  for (let i = 0; i < servers; i++) {
    const id = String(i).padStart(6, "0")
    const topic = WORDS[i % WORDS.length]
    const other = WORDS[(i * 7 + 3) % WORDS.length]
    for (let v = 1; v <= versions; v++) {
      entries.push({
        server: {
          name: `io.example.bench/${topic}-server-${id}`,
          title: `${topic[0].toUpperCase()}${topic.slice(1)} server ${id}`,
          description: `Connects assistants to ${topic} and ${other} (synthetic server ${id}).`,
          version: `1.${v - 1}.0`,
          repository: { url: `https://github.com/example-bench/${topic}-server-${id}`, source: "github" },
          packages: [{
            registryType: "npm",
            identifier: `@example-bench/${topic}-${id}`,
            version: `1.${v - 1}.0`,
            transport: { type: "stdio" },
            environmentVariables: i % 3 === 0 ? [{ name: `${topic.toUpperCase()}_API_KEY`, isRequired: true, isSecret: true }] : []
          }],
          ...(i % 5 === 0 ? { remotes: [{ type: "streamable-http", url: `https://${topic}-${id}.example.com/mcp` }] } : {})
        },
        meta: { status: "active", statusChangedAt: at, publishedAt: at, updatedAt: at, isLatest: v === versions }
      })
    }
  }
  return entries
}

const keyOf = (e: RegistryEntry) => `${e.server.name}\u0000${e.server.version}`
const compareKeys = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

const encodeCursor = (e: RegistryEntry) => Buffer.from(JSON.stringify([e.server.name, e.server.version])).toString("base64url")
const decodeCursor = (cursor: string): string | undefined => {
  try {
    const [name, version] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    return typeof name === "string" && typeof version === "string" ? `${name}\u0000${version}` : undefined
  } catch {
    return undefined
  }
}

const wire = (e: RegistryEntry) => ({ server: e.server, _meta: { [OFFICIAL_META]: e.meta } })

export const startRegistryServer = async (options: RegistryServerOptions = {}): Promise<RegistryServer> => {
  const maxLimit = options.maxLimit ?? 100
  const entries = options.synthetic === undefined ? seedEntries() : syntheticEntries(options.synthetic.servers, options.synthetic.versions)
  // kept in (name, version) order: the order pages walk in
  entries.sort((a, b) => compareKeys(keyOf(a), keyOf(b)))
  const requests: Array<ListedRequest> = []
  const readmes = new Map<string, string>()
  const failures = new Map<number, number>()
  let listRequests = 0
  let delayMs = 0
  // strictly increasing, so every change is after any `updated_since` taken before it
  let lastChange = 0
  const changedAt = () => {
    lastChange = Math.max(Date.now(), lastChange + 1)
    return new Date(lastChange).toISOString()
  }

  const find = (name: string, version?: string) => {
    const found = version === undefined || version === "latest"
      ? entries.find((e) => e.server.name === name && e.meta.isLatest)
      : entries.find((e) => e.server.name === name && e.server.version === version)
    if (found === undefined) throw new Error(`the registry holds no ${name} ${version ?? "latest"}`)
    return found
  }
  const touch = (e: RegistryEntry) => {
    e.meta.updatedAt = changedAt()
    return e
  }

  const list = (query: URLSearchParams) => {
    const limit = Math.min(maxLimit, Math.max(1, Number(query.get("limit") ?? 30) || 30))
    const after = query.get("cursor") === null ? undefined : decodeCursor(query.get("cursor")!)
    if (query.get("cursor") !== null && after === undefined) return { status: 400, body: { error: "invalid cursor" } }
    const since = query.get("updated_since")
    const sinceMs = since === null ? undefined : Date.parse(since)
    if (sinceMs !== undefined && Number.isNaN(sinceMs)) return { status: 400, body: { error: "invalid updated_since" } }
    const search = query.get("search")?.toLowerCase()
    const includeDeleted = query.get("include_deleted") === "true"
    const latestOnly = query.get("version") === "latest"
    const matching = entries.filter(
      (e) =>
        (after === undefined || compareKeys(keyOf(e), after) > 0) &&
        (sinceMs === undefined || Date.parse(e.meta.updatedAt) >= sinceMs) &&
        (search === undefined || String(e.server.name).toLowerCase().includes(search)) &&
        (includeDeleted || e.meta.status !== "deleted") &&
        (!latestOnly || e.meta.isLatest)
    )
    const page = matching.slice(0, limit)
    const more = matching.length > limit
    return {
      status: 200,
      body: { servers: page.map(wire), metadata: { count: page.length, ...(more ? { nextCursor: encodeCursor(page[page.length - 1]) } : {}) } }
    }
  }

  const answer = (url: URL): { status: number; body: unknown; type?: string } => {
    if (url.pathname === "/v0.1/servers") {
      listRequests += 1
      const failure = failures.get(listRequests)
      if (failure !== undefined) {
        failures.delete(listRequests)
        return { status: failure, body: { error: "registry unavailable" } }
      }
      return list(url.searchParams)
    }
    const one = /^\/v0\.1\/servers\/(.+)\/versions\/([^/]+)$/.exec(url.pathname)
    if (one !== null) {
      const name = decodeURIComponent(one[1])
      const version = decodeURIComponent(one[2])
      const found = entries.find((e) => e.server.name === name && (version === "latest" ? e.meta.isLatest : e.server.version === version))
      return found === undefined ? { status: 404, body: { error: "server not found" } } : { status: 200, body: wire(found) }
    }
    const raw = /^\/raw\/([^/]+\/[^/]+)\/HEAD\/README\.md$/.exec(url.pathname)
    if (raw !== null && readmes.has(raw[1].toLowerCase())) return { status: 200, body: readmes.get(raw[1].toLowerCase()), type: "text/plain; charset=utf-8" }
    return { status: 404, body: { error: "not found" } }
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://registry.local")
    const { status, body, type } = answer(url)
    requests.push({ path: url.pathname, query: Object.fromEntries(url.searchParams), status })
    const reply = () => {
      res.writeHead(status, { "content-type": type ?? "application/json" })
      res.end(typeof body === "string" ? body : JSON.stringify(body))
    }
    if (delayMs > 0) setTimeout(reply, delayMs)
    else reply()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  return {
    url,
    rawBaseUrl: `${url}/raw`,
    entries: () => entries,
    requests,
    addVersion: (name, version, changes = {}) => {
      const previous = find(name)
      const at = changedAt()
      const added: RegistryEntry = {
        server: { ...structuredClone(previous.server), ...changes, version },
        meta: { status: "active", statusChangedAt: at, publishedAt: at, updatedAt: at, isLatest: true }
      }
      previous.meta.isLatest = false
      previous.meta.updatedAt = at
      entries.push(added)
      entries.sort((a, b) => compareKeys(keyOf(a), keyOf(b)))
      return added
    },
    markDeleted: (name, version) => {
      const e = find(name, version)
      e.meta.status = "deleted"
      e.meta.statusChangedAt = changedAt()
      return touch(e)
    },
    setSecret: (name, variable, isSecret = true, version) => {
      const e = find(name, version)
      const variables = [
        ...(e.server.packages ?? []).flatMap((p: any) => p.environmentVariables ?? []),
        ...(e.server.remotes ?? []).flatMap((r: any) => r.headers ?? [])
      ].filter((v: any) => v.name === variable)
      if (variables.length === 0) throw new Error(`${name} declares no variable ${variable}`)
      for (const v of variables) v.isSecret = isSecret
      return touch(e)
    },
    change: (name, changes, version) => {
      const e = find(name, version)
      Object.assign(e.server, changes)
      return touch(e)
    },
    failListRequest: (nth, status = 503) => {
      failures.set(listRequests + nth, status)
    },
    setDelay: (ms) => {
      delayMs = ms
    },
    setReadme: (repository, markdown) => {
      readmes.set(repository.toLowerCase(), markdown)
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
