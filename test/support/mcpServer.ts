/**
 * A real MCP server for plugin tests, built with the MCP SDK on 127.0.0.1: Streamable HTTP at
 * `/mcp` (stateless), and an older server speaking only HTTP+SSE at `/legacy` (its POST answers 405,
 * so clients fall back). Optionally protected: a request without an accepted bearer or header gets
 * 401 with `WWW-Authenticate` naming its RFC 9728 protected-resource metadata, served at
 * `/.well-known/oauth-protected-resource/mcp` with the authorization server's issuer.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { z } from "zod"

export interface McpTestServerOptions {
  /** Whether a request is let in, from its headers (and its URL); unset: every request is. */
  readonly admit?: (headers: http.IncomingHttpHeaders, url: URL) => boolean | Promise<boolean>
  /** The authorization server named in the protected-resource metadata. */
  readonly authorizationServer?: string
  /** Scopes the resource metadata lists. */
  readonly scopes?: ReadonlyArray<string>
}

export interface McpTestServer {
  readonly url: string
  /** Streamable HTTP endpoint. */
  readonly mcpUrl: string
  /** HTTP+SSE only endpoint. */
  readonly legacyUrl: string
  /** Every request that reached an MCP endpoint: its path, query and headers. */
  readonly requests: Array<{ readonly path: string; readonly search: string; readonly method: string; readonly headers: http.IncomingHttpHeaders }>
  readonly close: () => Promise<void>
}

const TOOLS = ["echo", "add"] as const
export const TEST_SERVER_TOOLS: ReadonlyArray<string> = TOOLS

const mcpServer = () => {
  const server = new McpServer({ name: "plugin-test-server", version: "1.0.0" })
  server.registerTool("echo", { description: "Echo the text", inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: "text", text }] }))
  server.registerTool("add", { description: "Add two numbers", inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
    content: [{ type: "text", text: String(a + b) }]
  }))
  return server
}

export const startMcpTestServer = async (options: McpTestServerOptions = {}): Promise<McpTestServer> => {
  const requests: McpTestServer["requests"] = []
  const legacySessions = new Map<string, SSEServerTransport>()
  let base = ""
  const resourceMetadataPath = "/.well-known/oauth-protected-resource/mcp"

  const refuse = (res: http.ServerResponse) => {
    res.writeHead(401, { "www-authenticate": `Bearer resource_metadata="${base}${resourceMetadataPath}"`, "content-type": "application/json" })
    res.end(JSON.stringify({ error: "invalid_token" }))
  }

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", base)
    try {
      if (url.pathname === resourceMetadataPath || url.pathname === "/.well-known/oauth-protected-resource") {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({
          resource: `${base}/mcp`,
          authorization_servers: options.authorizationServer === undefined ? [] : [options.authorizationServer],
          scopes_supported: options.scopes ?? [],
          bearer_methods_supported: ["header"]
        }))
        return
      }
      if (url.pathname === "/mcp" || url.pathname.startsWith("/legacy")) {
        requests.push({ path: url.pathname, search: url.search, method: req.method ?? "", headers: req.headers })
        if (options.admit !== undefined && !(await options.admit(req.headers, url))) return refuse(res)
      }
      if (url.pathname === "/mcp") {
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
        const instance = mcpServer()
        res.on("close", () => {
          void transport.close()
          void instance.close()
        })
        await instance.connect(transport)
        await transport.handleRequest(req, res)
        return
      }
      if (url.pathname === "/legacy" && req.method === "GET") {
        const transport = new SSEServerTransport("/legacy/messages", res)
        legacySessions.set(transport.sessionId, transport)
        res.on("close", () => legacySessions.delete(transport.sessionId))
        await mcpServer().connect(transport)
        return
      }
      if (url.pathname === "/legacy/messages" && req.method === "POST") {
        const transport = legacySessions.get(url.searchParams.get("sessionId") ?? "")
        if (transport === undefined) {
          res.writeHead(404).end()
          return
        }
        await transport.handlePostMessage(req, res)
        return
      }
      res.writeHead(url.pathname === "/legacy" ? 405 : 404).end()
    } catch (error) {
      if (!res.headersSent) res.writeHead(500)
      res.end(String(error))
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url: base,
    mcpUrl: `${base}/mcp`,
    legacyUrl: `${base}/legacy`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/**
 * Admits a request whose bearer the authorization server says is active, asking its introspection
 * endpoint (RFC 7662) as the resource server's own client; the bearers admitted are recorded, and
 * the subject (`sub`) each was issued to, in `subjects`.
 */
export const introspectingAdmit = (issuer: string, clientId: string, clientSecret: string, admitted: Array<string> = [], subjects: Array<string> = []) =>
  async (headers: http.IncomingHttpHeaders): Promise<boolean> => {
    const bearer = /^Bearer (.+)$/.exec(headers.authorization ?? "")?.[1]
    if (bearer === undefined) return false
    const response = await fetch(`${issuer}/token/introspection`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}` },
      body: new URLSearchParams({ token: bearer }).toString()
    })
    const introspected = response.ok ? ((await response.json()) as { active?: boolean; sub?: string }) : {}
    if (introspected.active !== true) return false
    admitted.push(bearer)
    subjects.push(introspected.sub ?? "")
    return true
  }
