/**
 * CORS on a real node: browser clients (the MCP Inspector, browser A2A clients) at a listed origin
 * may call /mcp and /a2a with a key and read the public discovery documents; any other origin is
 * refused there, and the cookie routes allow no foreign origin at all. Node's fetch sends the
 * headers a browser would (Origin, Access-Control-Request-*), so what a browser sees is read here.
 */
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { addPerson, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { mcpInitialize as initialize } from "../support/mcp.ts"

const INSPECTOR = "https://inspector.example"
const STRANGER = "https://stranger.example"

let node: TestNode

beforeAll(async () => {
  // `*` opens the public documents to every origin, and nothing else
  node = await startTestNode({ corsOrigins: [INSPECTOR, "*"] })
})
afterAll(async () => {
  await node?.stop()
})

const preflight = (path: string, origin: string, method: string, headers: string) =>
  fetch(`${node.baseUrl}${path}`, { method: "OPTIONS", headers: { origin, "access-control-request-method": method, "access-control-request-headers": headers } })

/** The response's CORS headers (and Vary), by lower-case name. */
const corsHeadersOf = (response: Response) =>
  Object.fromEntries([...response.headers].filter(([name]) => name.startsWith("access-control-") || name === "vary"))

const exposed = (response: Response) => (response.headers.get("access-control-expose-headers") ?? "").split(", ")

const mcpInitialize = (headers: Record<string, string>) => initialize(node.baseUrl, headers)

const a2aStream = (headers: Record<string, string>) =>
  fetch(`${node.baseUrl}/a2a`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream", authorization: `Bearer ${node.bootstrap.workspaceKey}`, ...headers },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "message/stream",
      params: { message: { kind: "message", role: "user", messageId: randomUUID(), parts: [{ kind: "text", text: "hello" }] } }
    })
  })

describe("preflight", () => {
  it("from a listed origin: 204 with the origin, the route's methods and headers, a max age, and no credentials", async () => {
    const mcp = await preflight("/mcp", INSPECTOR, "POST", "authorization,content-type,mcp-protocol-version,mcp-session-id")
    expect(mcp.status).toBe(204)
    expect(corsHeadersOf(mcp)).toEqual({
      "access-control-allow-origin": INSPECTOR,
      vary: "Origin",
      "access-control-allow-methods": "POST, GET, DELETE",
      "access-control-allow-headers": "Authorization, Content-Type, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID",
      "access-control-max-age": "7200"
    })

    const a2a = await preflight("/a2a", INSPECTOR, "POST", "authorization,content-type")
    expect(a2a.status).toBe(204)
    expect(a2a.headers.get("access-control-allow-origin")).toBe(INSPECTOR)
    expect(a2a.headers.get("access-control-allow-headers")).toBe("Authorization, Content-Type, Svc-Position, X-A2A-Extensions, A2A-Version")
    expect(a2a.headers.get("access-control-allow-credentials")).toBeNull()

    // A2A 1.0's HTTP+JSON binding: the same headers, and its GETs too
    const rest = await preflight("/a2a/v1/tasks", INSPECTOR, "GET", "authorization,a2a-version")
    expect(rest.status).toBe(204)
    expect(rest.headers.get("access-control-allow-origin")).toBe(INSPECTOR)
    expect(rest.headers.get("access-control-allow-methods")).toBe("GET, POST, DELETE")
    expect(rest.headers.get("access-control-allow-headers")).toBe("Authorization, Content-Type, Svc-Position, X-A2A-Extensions, A2A-Version")
  })

  it("from another origin: 403 without CORS headers on /mcp, /a2a and /a2a/v1", async () => {
    for (const path of ["/mcp", "/a2a", "/a2a/v1/message:send"]) {
      const response = await preflight(path, STRANGER, "POST", "authorization,content-type")
      expect(response.status, path).toBe(403)
      expect(corsHeadersOf(response)).toEqual({})
      expect(await response.json()).toMatchObject({ error: { code: "forbidden", reason: "origin_not_allowed" } })
    }
  })

  it("of the public documents, as the MCP SDK sends it: any origin, with `*`", async () => {
    const response = await preflight("/.well-known/oauth-protected-resource/mcp", STRANGER, "GET", "mcp-protocol-version")
    expect(response.status).toBe(204)
    expect(corsHeadersOf(response)).toEqual({
      "access-control-allow-origin": "*",
      "access-control-allow-methods": "GET",
      "access-control-allow-headers": "Mcp-Protocol-Version",
      "access-control-max-age": "7200"
    })
  })
})

describe("responses", () => {
  it("MCP's 401 lets a listed origin read its WWW-Authenticate; a keyed initialize lets it read the answer", async () => {
    const refused = await mcpInitialize({ origin: INSPECTOR })
    expect(refused.status).toBe(401)
    expect(refused.headers.get("www-authenticate")).toContain("resource_metadata=")
    expect(refused.headers.get("access-control-allow-origin")).toBe(INSPECTOR)
    expect(refused.headers.get("vary")).toBe("Origin")
    expect(exposed(refused)).toEqual(["Mcp-Session-Id", "WWW-Authenticate", "Svc-Position", "Retry-After", "X-Request-Id"])

    const answered = await mcpInitialize({ origin: INSPECTOR, authorization: `Bearer ${node.bootstrap.workspaceKey}` })
    expect(answered.status).toBe(200)
    expect(answered.headers.get("access-control-allow-origin")).toBe(INSPECTOR)
    expect(answered.headers.get("access-control-allow-credentials")).toBeNull()
    expect(await answered.json()).toMatchObject({ jsonrpc: "2.0", id: 1, result: { serverInfo: { name: "svc" } } })
  })

  it("an A2A stream carries the CORS headers from its first byte", async () => {
    const response = await a2aStream({ origin: INSPECTOR })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    expect(corsHeadersOf(response)).toEqual({
      "access-control-allow-origin": INSPECTOR,
      vary: "Origin",
      "access-control-expose-headers": "Mcp-Session-Id, WWW-Authenticate, Svc-Position, Retry-After, X-Request-Id"
    })
    expect(await response.text()).toContain('"kind":"status-update"')
  })

  it("another origin is refused 403 before the route runs; a client sending no Origin is served as before", async () => {
    for (const response of [
      await mcpInitialize({ origin: STRANGER, authorization: `Bearer ${node.bootstrap.workspaceKey}` }),
      await a2aStream({ origin: STRANGER }),
      // `null` (a sandboxed page, a file) is an origin like any other: not listed, refused
      await a2aStream({ origin: "null" })
    ]) {
      expect(response.status).toBe(403)
      expect(corsHeadersOf(response)).toEqual({})
      expect(await response.json()).toMatchObject({ error: { code: "forbidden", reason: "origin_not_allowed" } })
    }
    const server = await mcpInitialize({ authorization: `Bearer ${node.bootstrap.workspaceKey}` })
    expect(server.status).toBe(200)
    expect(corsHeadersOf(server)).toEqual({ vary: "Origin" })
  })

  it("the node's own origin is no foreign origin", async () => {
    const response = await mcpInitialize({ origin: new URL(node.config.baseUrl).origin, authorization: `Bearer ${node.bootstrap.workspaceKey}` })
    expect(response.status).toBe(200)
  })

  it("the public documents are readable from any origin", async () => {
    for (const path of ["/.well-known/agent-card.json", "/.well-known/oauth-protected-resource", "/.well-known/jwks.json"]) {
      const response = await fetch(`${node.baseUrl}${path}`, { headers: { origin: STRANGER } })
      expect(response.status, path).toBe(200)
      expect(response.headers.get("access-control-allow-origin")).toBe("*")
    }
  })
})

describe("cookie routes", () => {
  it("allow no foreign origin, a listed one neither: preflights are refused and answers carry no CORS header", async () => {
    for (const [path, method] of [
      ["/v1/auth/sign-in", "POST"],
      ["/v1/auth/sign-out", "POST"],
      ["/v1/auth/whoami", "GET"],
      [`/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/chat/stream`, "POST"]
    ]) {
      const response = await preflight(path, INSPECTOR, method, "content-type")
      expect(response.status, path).toBe(403)
      expect(corsHeadersOf(response)).toEqual({})
    }

    // a page of another site (a listed origin too) cannot sign in, nor out, nor write with the cookie
    const person = await addPerson(node, "cors", { org: "member", workspace: "member" })
    const signedIn = await fetch(`${node.baseUrl}/v1/auth/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: INSPECTOR },
      body: JSON.stringify({ email: person.email, password: person.password })
    })
    expect(signedIn.status).toBe(403)
    expect(signedIn.headers.get("set-cookie")).toBeNull()
    expect(corsHeadersOf(signedIn)).toEqual({})
    expect(((await signedIn.json()) as any).error).toMatchObject({ code: "forbidden", reason: "cross_site_request" })

    const { cookie } = await signIn(node.baseUrl, person)
    const write = `/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/node/create`
    const forged = await fetch(`${node.baseUrl}${write}`, {
      method: "POST",
      headers: { cookie, "content-type": "text/plain", origin: STRANGER },
      body: JSON.stringify({ label: "Note", properties: { title: "forged" } })
    })
    expect(forged.status).toBe(403)
    const signedOut = await fetch(`${node.baseUrl}/v1/auth/sign-out`, { method: "POST", headers: { cookie, origin: INSPECTOR } })
    expect(signedOut.status).toBe(403)
    expect(corsHeadersOf(signedOut)).toEqual({})
    // the session is untouched, and the app's own page (same origin) may sign out
    const own = new URL(node.baseUrl).origin
    const listed = await fetch(`${node.baseUrl}/v1/${node.bootstrap.orgSlug}/${node.bootstrap.workspaceSlug}/node/list`, {
      method: "POST",
      headers: { cookie, "content-type": "application/json", origin: own, "sec-fetch-site": "same-origin" },
      body: "{}"
    })
    expect(listed.status).toBe(200)
    expect(((await listed.json()) as any).nodes.some((n: any) => n.properties?.title === "forged")).toBe(false)
    const ownSignOut = await fetch(`${node.baseUrl}/v1/auth/sign-out`, { method: "POST", headers: { cookie, origin: own } })
    expect(ownSignOut.status).toBe(200)
  })

  it("a session cookie does not authenticate at the CORS routes", async () => {
    const person = await addPerson(node, "cors-mcp", { org: "member", workspace: "member" })
    const { cookie } = await signIn(node.baseUrl, person)
    const response = await mcpInitialize({ origin: INSPECTOR, cookie })
    expect(response.status).toBe(401)
    expect(response.headers.get("access-control-allow-origin")).toBe(INSPECTOR)
  })
})
