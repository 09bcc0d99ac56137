/**
 * Connecting to a listing's MCP server with the MCP SDK client: Streamable HTTP first, falling back
 * to SSE when the endpoint answers the Streamable HTTP request with 400, 404 or 405 (the SDK's
 * advice for servers of the older protocol), or directly SSE for a listing whose transport is SSE.
 * Every request goes through the outbound guard (McpFetch.ts). The health check lists the tools.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Duration, Effect, Schema } from "effect"
import type { Transport as ListingTransport } from "../../actors/listing/definition.ts"

export interface McpTarget {
  readonly endpointUrl: string
  readonly transport: ListingTransport
  /** Sent on every request: a secret's header, or the OAuth bearer. */
  readonly headers: Readonly<Record<string, string>>
}

/** The connection or the listing of tools failed; `message` says how (never a credential). */
export class McpUnreachable extends Schema.TaggedError<McpUnreachable>()("McpUnreachable", {
  endpointUrl: Schema.String,
  message: Schema.String
}) {}

/** How long a health check may take, connection and tool listing included. */
export const HEALTH_CHECK_TIMEOUT = Duration.seconds(10)

const CLIENT_INFO = { name: "svc-plugin-health", version: "1.0.0" }

const olderProtocol = (error: unknown) => error instanceof StreamableHTTPError && [400, 404, 405].includes(error.code ?? 0)

const transportOf = (kind: ListingTransport, target: McpTarget, fetch: FetchLike): Transport => {
  const options = { fetch, requestInit: { headers: { ...target.headers } } }
  return kind === "streamable-http"
    ? new StreamableHTTPClientTransport(new URL(target.endpointUrl), options)
    : new SSEClientTransport(new URL(target.endpointUrl), options)
}

/** Connects (falling back as above), runs `use` with the client, and closes. */
const withClient = <A>(target: McpTarget, fetch: FetchLike, use: (client: Client) => Promise<A>) =>
  Effect.tryPromise({
    try: async () => {
      const attempt = async (kind: ListingTransport) => {
        const client = new Client(CLIENT_INFO)
        try {
          await client.connect(transportOf(kind, target, fetch))
          return await use(client)
        } finally {
          await client.close().catch(() => undefined)
        }
      }
      if (target.transport === "sse") return attempt("sse")
      try {
        return await attempt("streamable-http")
      } catch (error) {
        if (!olderProtocol(error)) throw error
        return attempt("sse")
      }
    },
    catch: (error) => new McpUnreachable({ endpointUrl: target.endpointUrl, message: error instanceof Error ? error.message : String(error) })
  }).pipe(
    Effect.timeoutFail({
      duration: HEALTH_CHECK_TIMEOUT,
      onTimeout: () => new McpUnreachable({ endpointUrl: target.endpointUrl, message: `no answer within ${Duration.toSeconds(HEALTH_CHECK_TIMEOUT)} s` })
    })
  )

/** The names of the tools the server lists (every page). */
export const listTools = (target: McpTarget, fetch: FetchLike) =>
  withClient(target, fetch, async (client) => {
    const names: Array<string> = []
    let cursor: string | undefined
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor })
      names.push(...page.tools.map((tool) => tool.name))
      cursor = page.nextCursor
    } while (cursor !== undefined)
    return names
  })
