/**
 * Connecting to a listing's MCP server with the MCP SDK client: Streamable HTTP first, falling back
 * to SSE when the endpoint answers the Streamable HTTP request with 400, 404 or 405 (the SDK's
 * advice for servers of the older protocol), or directly SSE for a listing whose transport is SSE.
 * Every request goes through the outbound guard (`checkedFetch`, src/platform/Outbound.ts). The health check lists the tools.
 * A server that refuses with 401 and publishes RFC 9728 protected-resource metadata naming an
 * authorization server (found from the `WWW-Authenticate` challenge's `resource_metadata`, else at
 * `/.well-known/oauth-protected-resource`) asks for OAuth: spec 6.3.4's detection at connect time.
 */
import { discoverOAuthProtectedResourceMetadata, extractResourceMetadataUrl } from "@modelcontextprotocol/sdk/client/auth.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Duration, Effect, Schema } from "effect"
import type { Transport as ListingTransport } from "../../actors/listing/definition.ts"

/** Where a workspace's connection goes and what it carries (src/marketplace/Credentials.ts). */
export interface McpConnection {
  /** Where requests go: the listing's endpoint, with a secret URL variable filled in. */
  readonly url: string
  /** Sent on every request: a secret's header, or the OAuth bearer. */
  readonly headers: Readonly<Record<string, string>>
  /** Secret values `url` carries (as sent, and as given): no message shows them. */
  readonly conceal: ReadonlyArray<string>
}

export interface McpTarget extends McpConnection {
  /** The listing's endpoint as errors state it: a secret URL variable stays `{name}`. */
  readonly endpointUrl: string
  readonly transport: ListingTransport
}

/** A message with the target's concealed values taken out. */
const concealed = (target: McpTarget, message: string) => target.conceal.reduce((text, secret) => text.replaceAll(secret, "[secret]"), message)

/** The connection or the listing of tools failed; `message` says how (never a credential). */
export class McpUnreachable extends Schema.TaggedError<McpUnreachable>()("McpUnreachable", {
  endpointUrl: Schema.String,
  message: Schema.String
}) {}

/** The server refused the connection with an OAuth challenge: it needs an OAuth connection (plugin.oauth.start). */
export class McpOAuthRequired extends Schema.TaggedError<McpOAuthRequired>()("McpOAuthRequired", {
  endpointUrl: Schema.String,
  authorizationServer: Schema.String
}) {
  /** What a health check records (the install's `healthError`): a stable code a client can act on. */
  static readonly healthError = "oauth_required"
  override get message() {
    return `the server asks for OAuth authorization at ${this.authorizationServer}: connect it with plugin.oauth.start`
  }
}

/** The authorization server a 401 answer points to (RFC 9728), or undefined when it names none. */
const oauthChallenged = async (endpointUrl: string, refusal: Response, fetch: FetchLike): Promise<string | undefined> => {
  const metadata = await discoverOAuthProtectedResourceMetadata(endpointUrl, { resourceMetadataUrl: extractResourceMetadataUrl(refusal) }, fetch).catch(() => undefined)
  return metadata?.authorization_servers?.[0]
}

/** How long a health check may take, connection and tool listing included. */
export const HEALTH_CHECK_TIMEOUT = Duration.seconds(10)

const CLIENT_INFO = { name: "svc-plugin-health", version: "1.0.0" }

const olderProtocol = (error: unknown) => error instanceof StreamableHTTPError && [400, 404, 405].includes(error.code ?? 0)

const transportOf = (kind: ListingTransport, target: McpTarget, fetch: FetchLike): Transport => {
  const options = { fetch, requestInit: { headers: { ...target.headers } } }
  return kind === "streamable-http"
    ? new StreamableHTTPClientTransport(new URL(target.url), options)
    : new SSEClientTransport(new URL(target.url), options)
}

/** Connects (falling back as above), runs `use` with the client, and closes. */
const withClient = <A>(target: McpTarget, fetch: FetchLike, use: (client: Client) => Promise<A>) =>
  Effect.tryPromise({
    try: async () => {
      // the last 401 answer, whose challenge says whether the server asks for OAuth
      let refusal: Response | undefined
      const watching: FetchLike = async (url, init) => {
        const response = await fetch(url, init)
        if (response.status === 401) refusal = response
        return response
      }
      const attempt = async (kind: ListingTransport) => {
        const client = new Client(CLIENT_INFO)
        try {
          await client.connect(transportOf(kind, target, watching))
          return await use(client)
        } finally {
          await client.close().catch(() => undefined)
        }
      }
      try {
        if (target.transport === "sse") return await attempt("sse")
        try {
          return await attempt("streamable-http")
        } catch (error) {
          if (!olderProtocol(error)) throw error
          return await attempt("sse")
        }
      } catch (error) {
        const authorizationServer = refusal === undefined ? undefined : await oauthChallenged(target.url, refusal, fetch)
        throw authorizationServer === undefined ? error : new McpOAuthRequired({ endpointUrl: target.endpointUrl, authorizationServer })
      }
    },
    catch: (error) =>
      error instanceof McpOAuthRequired
        ? error
        : new McpUnreachable({ endpointUrl: target.endpointUrl, message: concealed(target, error instanceof Error ? error.message : String(error)) })
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
