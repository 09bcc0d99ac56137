/** The marketplace's settings as loaded from the environment, and registry base URLs as kept. */
import { describe, expect, it } from "vitest"
import { loadConfig } from "../../src/platform/Config.ts"
import { DEFAULT_SEED_REGISTRY_ID, normalizeBaseUrl, orgRegistryId } from "../../src/marketplace/RegistrySettings.ts"

describe("marketplace settings", () => {
  it("default to the official registry, GitHub's raw host, an hourly sync of pages of 100", () => {
    expect(loadConfig({}).marketplace).toEqual({
      defaultRegistryUrl: "https://registry.modelcontextprotocol.io",
      githubRawBaseUrl: "https://raw.githubusercontent.com",
      syncIntervalSeconds: 3600,
      pageSize: 100,
      leaseMs: 120_000
    })
  })
  it("read MCP_REGISTRY_URL, GITHUB_RAW_BASE_URL and the sync's knobs; 0 turns the schedule off", () => {
    const env = { MCP_REGISTRY_URL: "http://127.0.0.1:9000/", GITHUB_RAW_BASE_URL: "http://127.0.0.1:9000/raw", CATALOG_SYNC_INTERVAL_SECONDS: "0", CATALOG_SYNC_PAGE_SIZE: "50", CATALOG_SYNC_LEASE_SECONDS: "30" }
    expect(loadConfig(env).marketplace).toEqual({ defaultRegistryUrl: "http://127.0.0.1:9000", githubRawBaseUrl: "http://127.0.0.1:9000/raw", syncIntervalSeconds: 0, pageSize: 50, leaseMs: 30_000 })
  })
  it("refuse a registry URL that is not one", () => {
    expect(() => loadConfig({ MCP_REGISTRY_URL: "ftp://registry.example" })).toThrow(/MCP_REGISTRY_URL/)
    expect(() => loadConfig({ CATALOG_SYNC_INTERVAL_SECONDS: "-1" })).toThrow(/CATALOG_SYNC_INTERVAL_SECONDS/)
  })
})

describe("registry base URLs", () => {
  it.each([
    ["https://registry.example.com/", "https://registry.example.com"],
    ["https://Registry.Example.com/mcp//", "https://registry.example.com/mcp"],
    ["http://127.0.0.1:8080", "http://127.0.0.1:8080"],
    ["https://user:pw@registry.example.com", undefined],
    ["https://registry.example.com/?a=1", undefined],
    ["https://registry.example.com/#x", undefined],
    ["file:///etc/passwd", undefined],
    ["not a url", undefined]
  ])("%s -> %s", (given, kept) => {
    expect(normalizeBaseUrl(given)).toBe(kept)
  })
  it("make one registry id per (organization, URL), apart from the seed's", () => {
    expect(orgRegistryId("org_1", "https://a")).toBe(orgRegistryId("org_1", "https://a"))
    expect(new Set([orgRegistryId("org_1", "https://a"), orgRegistryId("org_2", "https://a"), orgRegistryId("org_1", "https://b"), DEFAULT_SEED_REGISTRY_ID]).size).toBe(4)
  })
})
