import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
/** A raw MCP `initialize` over HTTP, as a client without the SDK sends it (headers are the test's). */
export const mcpInitialize = (baseUrl: string, headers: Record<string, string>) =>
  fetch(`${baseUrl}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
    })
  })

/** An MCP SDK client of the node's `/mcp`, with a bearer key. */
export const connectMcp = async (baseUrl: string, key: string, clientName: string) => {
  const client = new Client({ name: clientName, version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }))
  return client
}
