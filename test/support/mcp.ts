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
