/**
 * A registry's answer (`{ server, _meta }`, spec 4.6) as the catalog keeps it, derived exactly as
 * spec 6.3.4 says: transport types are the distinct types over packages and remotes; the auth kind
 * is `secret` when any package environment variable, remote header or remote variable is flagged
 * `isSecret`, else `none` (OAuth is found at connect time); status defaults to `active` and
 * `isLatest` to false when the metadata is absent.
 */
import { createHash } from "node:crypto"
import type { Json } from "../../actors/kernel.ts"
import type { CatalogEntry } from "../../actors/registry/events.ts"

/** Where the official registry nests its metadata; a registry may also put it at `_meta`'s top. */
export const OFFICIAL_META = "io.modelcontextprotocol.registry/official"
/** The publisher's own extension of `server.json`, where categories are read from. */
export const PUBLISHER_META = "io.modelcontextprotocol.registry/publisher-provided"

type Obj = Readonly<Record<string, unknown>>

const isObj = (value: unknown): value is Obj => typeof value === "object" && value !== null && !Array.isArray(value)
const objects = (value: unknown): ReadonlyArray<Obj> => (Array.isArray(value) ? value.filter(isObj) : [])
const text = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null)
const instant = (value: unknown): string | null => {
  const t = text(value)
  return t !== null && !Number.isNaN(Date.parse(t)) ? new Date(t).toISOString() : null
}

/** The catalog id of a version: `mcat_` and 32 hex digits of a digest of where it comes from. */
export const catalogServerId = (registryId: string, name: string, version: string) =>
  `mcat_${createHash("sha256").update(`${registryId}\u0000${name}\u0000${version}`).digest("hex").slice(0, 32)}`

/** A remote's URL variables by name: a map by name in server.json; a list of objects with a `name` is accepted too. */
export const remoteVariablesByName = (remote: unknown): ReadonlyArray<readonly [string, Obj]> => {
  if (!isObj(remote)) return []
  if (Array.isArray(remote.variables)) return objects(remote.variables).flatMap((v) => {
    const name = text(v.name)
    return name === null ? [] : [[name, v] as const]
  })
  return isObj(remote.variables) ? Object.entries(remote.variables).flatMap(([name, v]) => (isObj(v) ? [[name, v] as const] : [])) : []
}

const remoteVariables = (remote: Obj): ReadonlyArray<Obj> => remoteVariablesByName(remote).map(([, v]) => v)

export const transportTypesOf = (server: Obj): ReadonlyArray<string> => {
  const types = [
    ...objects(server.packages).map((p) => (isObj(p.transport) ? text(p.transport.type) : null)),
    ...objects(server.remotes).map((r) => text(r.type))
  ].filter((t): t is string => t !== null)
  return [...new Set(types)].sort()
}

const flaggedSecret = (values: ReadonlyArray<Obj>): ReadonlyArray<Obj> => values.filter((v) => v.isSecret === true)

/** The environment values of a package flagged secret, by name: what its process is given, not a remote. */
export const packageSecretNames = (pkg: unknown): ReadonlyArray<string> =>
  isObj(pkg) ? flaggedSecret(objects(pkg.environmentVariables)).map((v) => text(v.name) ?? "?") : []

/** A remote's own secrets (its headers and URL variables flagged secret) make it `secret`. */
export const remoteAuthKindOf = (remote: unknown): "secret" | "none" =>
  isObj(remote) && flaggedSecret([...objects(remote.headers), ...remoteVariables(remote)]).length > 0 ? "secret" : "none"

export const authKindOf = (server: Obj): "secret" | "none" =>
  objects(server.packages).some((p) => packageSecretNames(p).length > 0) || objects(server.remotes).some((r) => remoteAuthKindOf(r) === "secret") ? "secret" : "none"

const officialMeta = (meta: Obj): Obj => (isObj(meta[OFFICIAL_META]) ? meta[OFFICIAL_META] : meta)

const STATUSES = new Set(["active", "deprecated", "deleted"])

/** The catalog entry of one item of a registry's answer; undefined when it names no server version. */
export const deriveCatalogEntry = (registryId: string, item: unknown): CatalogEntry | undefined => {
  if (!isObj(item) || !isObj(item.server)) return undefined
  const server = item.server
  const name = text(server.name)
  const version = text(server.version)
  if (name === null || version === null) return undefined
  const wireMeta = isObj(item._meta) ? item._meta : {}
  const official = officialMeta(wireMeta)
  const publisher = isObj(server._meta) && isObj(server._meta[PUBLISHER_META]) ? server._meta[PUBLISHER_META] : {}
  const repository = isObj(server.repository) && text(server.repository.url) !== null ? server.repository : null
  return {
    serverId: catalogServerId(registryId, name, version),
    name,
    version,
    isLatest: official.isLatest === true,
    title: text(server.title),
    description: typeof server.description === "string" ? server.description : "",
    repository: repository as Json,
    websiteUrl: text(server.websiteUrl),
    icons: objects(server.icons) as Json,
    packages: objects(server.packages) as Json,
    remotes: objects(server.remotes) as Json,
    transportTypes: transportTypesOf(server),
    authKind: authKindOf(server),
    categories: Array.isArray(publisher.categories) ? publisher.categories.filter((c): c is string => typeof c === "string") : [],
    status: typeof official.status === "string" && STATUSES.has(official.status) ? (official.status as CatalogEntry["status"]) : "active",
    publishedAt: instant(official.publishedAt),
    upstreamUpdatedAt: instant(official.updatedAt),
    statusChangedAt: instant(official.statusChangedAt),
    meta: wireMeta as Json
  }
}
