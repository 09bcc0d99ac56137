/** Spec 6.3.4's derivations, row by row: transport types, auth kind from isSecret, status and
 * isLatest defaults, and what is not a server version. */
import { describe, expect, it } from "vitest"
import { catalogServerId, deriveCatalogEntry, OFFICIAL_META } from "../../src/marketplace/CatalogEntry.ts"
import { readmeSourceOf } from "../../src/marketplace/CatalogReadme.ts"
import { fromSeedRecord, seedEntries } from "../support/registryServer.ts"

const item = (server: Record<string, unknown>, meta?: Record<string, unknown>) => ({ server: { name: "io.example/s", version: "1.0.0", ...server }, ...(meta === undefined ? {} : { _meta: meta }) })
const derive = (server: Record<string, unknown>, meta?: Record<string, unknown>) => deriveCatalogEntry("mreg_1", item(server, meta))!

describe("transport_types: the distinct types over packages and remotes", () => {
  it.each([
    [{}, []],
    [{ packages: [{ transport: { type: "stdio" } }, { transport: { type: "stdio" } }] }, ["stdio"]],
    [{ remotes: [{ type: "sse", url: "https://a" }, { type: "streamable-http", url: "https://b" }] }, ["sse", "streamable-http"]],
    [{ packages: [{ transport: { type: "stdio" } }], remotes: [{ type: "sse", url: "https://a" }] }, ["sse", "stdio"]],
    [{ packages: [{ identifier: "no-transport" }] }, []]
  ])("%j -> %j", (server, expected) => {
    expect(derive(server).transportTypes).toEqual(expected)
  })
})

describe("auth_kind: secret when anything is flagged isSecret, else none", () => {
  it.each([
    ["nothing declared", {}, "none"],
    ["an unflagged variable", { packages: [{ environmentVariables: [{ name: "A", isSecret: false }] }] }, "none"],
    ["a package environment variable", { packages: [{ environmentVariables: [{ name: "A" }, { name: "KEY", isSecret: true }] }] }, "secret"],
    ["a remote header", { remotes: [{ type: "sse", url: "https://a", headers: [{ name: "Authorization", isSecret: true }] }] }, "secret"],
    ["a remote variable (map)", { remotes: [{ type: "sse", url: "https://{t}", variables: { t: { isSecret: true } } }] }, "secret"],
    ["a remote variable (list)", { remotes: [{ type: "sse", url: "https://a", variables: [{ name: "t", isSecret: true }] }] }, "secret"],
    ["isSecret as a string is no flag", { packages: [{ environmentVariables: [{ name: "A", isSecret: "true" }] }] }, "none"]
  ])("%s -> %s", (_, server, expected) => {
    expect(derive(server).authKind).toBe(expected)
  })
})

describe("status and is_latest", () => {
  it("default to active and false when the metadata is absent", () => {
    expect(derive({})).toMatchObject({ status: "active", isLatest: false, publishedAt: null, upstreamUpdatedAt: null })
  })
  it("are read from the official registry's nested metadata, or from _meta's top", () => {
    const nested = derive({}, { [OFFICIAL_META]: { status: "deprecated", isLatest: true, publishedAt: "2025-01-01T00:00:00Z", updatedAt: "2025-02-01T00:00:00Z" } })
    expect(nested).toMatchObject({ status: "deprecated", isLatest: true, publishedAt: "2025-01-01T00:00:00.000Z", upstreamUpdatedAt: "2025-02-01T00:00:00.000Z" })
    expect(derive({}, { status: "deleted", isLatest: true })).toMatchObject({ status: "deleted", isLatest: true })
    expect(derive({}, { status: "gone" }).status).toBe("active")
  })
})

describe("what is kept", () => {
  it("gives a version a stable id of its registry, name and version", () => {
    expect(derive({}).serverId).toBe(catalogServerId("mreg_1", "io.example/s", "1.0.0"))
    expect(catalogServerId("mreg_1", "a", "1")).not.toBe(catalogServerId("mreg_2", "a", "1"))
    expect(catalogServerId("mreg_1", "a", "1")).toMatch(/^mcat_[0-9a-f]{32}$/)
  })
  it("refuses an item without a name or a version", () => {
    expect(deriveCatalogEntry("mreg_1", { server: { name: "", version: "1" } })).toBeUndefined()
    expect(deriveCatalogEntry("mreg_1", { server: { name: "a" } })).toBeUndefined()
    expect(deriveCatalogEntry("mreg_1", { nothing: true })).toBeUndefined()
  })
  it("takes categories from the publisher's extension", () => {
    expect(derive({ _meta: { "io.modelcontextprotocol.registry/publisher-provided": { categories: ["dev", 3, "data"] } } }).categories).toEqual(["dev", "data"])
  })
  it("derives the whole real seed: 464 versions and 7 blank records", () => {
    const derived = seedEntries().map((e) => deriveCatalogEntry("mreg_1", { server: e.server, _meta: { [OFFICIAL_META]: e.meta } }))
    expect(derived.filter((d) => d !== undefined).length).toBe(464)
    expect(fromSeedRecord({ name: "", description: "", version_detail: { version: "" }, repository: { url: "" } }).server.name).toBe("")
  })
})

describe("README source", () => {
  it.each([
    [{ url: "https://github.com/a/b", source: "github" }, "RAW/a/b/HEAD/README.md"],
    [{ url: "https://github.com/a/b.git" }, "RAW/a/b/HEAD/README.md"],
    [{ url: "https://github.com/a/b", source: "github", subfolder: "servers/x" }, "RAW/a/b/HEAD/servers/x/README.md"],
    [{ url: "https://github.com/a/b", subfolder: "../../etc" }, "RAW/a/b/HEAD/etc/README.md"],
    [{ url: "https://gitlab.com/a/b", source: "gitlab" }, undefined],
    [{ url: "https://github.com/a/b", source: "gitlab" }, undefined],
    [{ url: "https://github.com/a" }, undefined],
    [null, undefined]
  ])("%j -> %s", (repository, expected) => {
    expect(readmeSourceOf(repository, "RAW")?.readmeUrl).toBe(expected)
  })
})
