/**
 * A catalog server's `secret` attached the way its remote takes it (spec 2.9, 5.11): a secret
 * declared as a URL variable of the remote is filled into the endpoint's URL at connect time (never
 * a bearer header, never stored in the listing, never in a message or log line); one declared as a
 * header stays a header. The servers are real MCP SDK servers on loopback that let the platform in
 * only when the secret arrived where they declared it.
 */
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { catalogServerId } from "../../src/marketplace/CatalogEntry.ts"
import { DEFAULT_SEED_REGISTRY_ID } from "../../src/marketplace/RegistrySettings.ts"
import { parseOutboundAllow } from "../../src/platform/Outbound.ts"
import { type McpTestServer, startMcpTestServer, TEST_SERVER_TOOLS } from "../support/mcpServer.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { type Caller, localSeedMarketplace, ok, signInPluginPeople } from "../support/plugins.ts"
import { type RegistryServer, startRegistryServer } from "../support/registryServer.ts"
import { findPlaintext } from "../support/secretScan.ts"
import { expectError } from "./client.ts"

/** Characters a URL must encode, so a secret pasted in as is would not arrive whole. */
const URL_KEY = `sk/url+${randomBytes(12).toString("hex")}&x=1`
const HEADER_KEY = `sk-header-${randomBytes(12).toString("hex")}`
/** Seed servers given remotes here: the secret in a URL variable; in a header; a URL variable at an address the node may not call; a variable with no default. */
const IN_URL = "io.github.tinyfish-io/agentql-mcp"
const IN_HEADER = "io.github.azure/azure-mcp"
const REFUSED = "io.github.agentrpc/agentrpc"
const NO_DEFAULT = "io.github.aiven-open/mcp-aiven"

let node: TestNode
let upstream: RegistryServer
let server: McpTestServer
let asOwner: Caller
const logLines: Array<string> = []

const seedServer = (name: string) => catalogServerId(DEFAULT_SEED_REGISTRY_ID, name, "0.0.1-seed")

/** Installs the seed server, enables it for the organization, and enters its secret in the workspace. */
const installed = async (name: string, secret: string, config?: Record<string, unknown>) => {
  const listing = ok(await asOwner("plugin.org.install", { catalogServerId: seedServer(name), ...(config === undefined ? {} : { config }) }))
  ok(await asOwner("plugin.org.set_enabled", { listingId: listing.listingId, enabled: true }))
  ok(await asOwner("plugin.credential.set_secret", { listingId: listing.listingId, secret }))
  return listing
}

beforeAll(async () => {
  // lets a request in when the key arrived where the server declared it: the api_key query parameter (with the region), or X-Api-Key
  server = await startMcpTestServer({
    admit: (headers, url) => (url.searchParams.get("api_key") === URL_KEY && url.searchParams.get("region") === "eu") || headers["x-api-key"] === HEADER_KEY
  })
  upstream = await startRegistryServer()
  const urlVariables = { region: { description: "Data region", default: "eu" }, api_key: { description: "Your API key", isSecret: true, isRequired: true } }
  upstream.change(IN_URL, { remotes: [{ type: "streamable-http", url: `${server.mcpUrl}?region={region}&api_key={api_key}`, variables: urlVariables }] })
  upstream.change(IN_HEADER, { remotes: [{ type: "streamable-http", url: server.mcpUrl, headers: [{ name: "X-Api-Key", isSecret: true, value: "{api_key}" }] }] })
  upstream.change(REFUSED, { remotes: [{ type: "streamable-http", url: "http://169.254.169.254/mcp?api_key={api_key}", variables: { api_key: { isSecret: true } } }] })
  upstream.change(NO_DEFAULT, {
    remotes: [{ type: "streamable-http", url: `${server.mcpUrl}?region={region}&api_key={api_key}`, variables: { region: { description: "Data region" }, api_key: { isSecret: true } } }]
  })
  node = await startTestNode(
    { outboundAllow: parseOutboundAllow("127.0.0.1"), authTokenEncryptionKey: randomBytes(32), marketplace: localSeedMarketplace(upstream), logging: { level: "debug", format: "json" } },
    { logSink: (line) => logLines.push(line) }
  )
  ;({ asOwner } = await signInPluginPeople(node, "url-secret-e2e"))
  ok(await asOwner("plugin.registry.sync", { registryId: DEFAULT_SEED_REGISTRY_ID, wait: true }))
}, 60_000)

afterAll(async () => {
  await node?.stop()
  await Promise.all([server?.close(), upstream?.close()])
})

describe("a secret declared as a URL variable of the remote", () => {
  it("is filled into the URL, encoded, when connecting, and sent in no header; the listing keeps the variable, not the secret", async () => {
    const listing = await installed(IN_URL, URL_KEY)
    // the non-secret variable takes its default at install; the secret one waits for connect time
    expect(listing).toMatchObject({ authKind: "secret", authConfig: { urlVariable: "api_key" }, endpointUrl: `${server.mcpUrl}?region=eu&api_key={api_key}` })
    const from = server.requests.length
    const health = ok(await asOwner("plugin.workspace.set_enabled", { listingId: listing.listingId, enabled: true }))
    expect(health).toMatchObject({ healthStatus: "healthy", healthError: null, tools: [...TEST_SERVER_TOOLS] })
    const sent = server.requests.slice(from)
    expect(sent.length).toBeGreaterThan(0)
    expect(sent.every((r) => new URLSearchParams(r.search).get("api_key") === URL_KEY)).toBe(true)
    expect(sent.some((r) => r.headers.authorization !== undefined || r.headers["x-api-key"] !== undefined)).toBe(false)
    const inList = ok(await asOwner("plugin.org.list", { limit: 200 })).listings.find((l: any) => l.listingId === listing.listingId)
    expect(inList.endpointUrl).toBe(`${server.mcpUrl}?region=eu&api_key={api_key}`)
  })

  it("a connection refused before it is made says why without the secret", async () => {
    const listing = await installed(REFUSED, URL_KEY)
    const health = ok(await asOwner("plugin.workspace.set_enabled", { listingId: listing.listingId, enabled: true }))
    expect(health.healthStatus).toBe("unhealthy")
    expect(health.healthError).toContain("refused to call 'http://169.254.169.254/mcp?api_key=[secret]'")
    expect(health.healthError).not.toContain(encodeURIComponent(URL_KEY))
  })

  it("a variable the address needs with no default is asked for at install (config), and then used", async () => {
    const refused = await asOwner("plugin.org.install", { catalogServerId: seedServer(NO_DEFAULT) })
    expectError(refused, 400, "bad_request", "url_variable_required")
    expect(refused.body.error.message).toContain("config.region")
    const listing = await installed(NO_DEFAULT, URL_KEY, { region: "eu" })
    expect(listing.endpointUrl).toBe(`${server.mcpUrl}?region=eu&api_key={api_key}`)
    expect(ok(await asOwner("plugin.workspace.set_enabled", { listingId: listing.listingId, enabled: true })).healthStatus).toBe("healthy")
  })
})

describe("a secret declared as a header of the remote", () => {
  it("stays in its header, not in the URL", async () => {
    const listing = await installed(IN_HEADER, HEADER_KEY)
    expect(listing).toMatchObject({ authConfig: { header: "X-Api-Key", valuePrefix: "" }, endpointUrl: server.mcpUrl })
    const from = server.requests.length
    expect(ok(await asOwner("plugin.workspace.set_enabled", { listingId: listing.listingId, enabled: true })).healthStatus).toBe("healthy")
    const sent = server.requests.slice(from)
    expect(sent.length).toBeGreaterThan(0)
    expect(sent.every((r) => r.headers["x-api-key"] === HEADER_KEY && r.search === "")).toBe(true)
  })
})

describe("no plaintext (spec 2.9)", () => {
  it("neither secret, nor the URL's encoding of it, shows in any table, event on the log or log line", async () => {
    expect(logLines.length).toBeGreaterThan(0)
    expect(await findPlaintext(node, [URL_KEY, encodeURIComponent(URL_KEY), HEADER_KEY], logLines)).toEqual([])
  })
})
