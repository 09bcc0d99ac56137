/**
 * The HTTP surface: routes derived from the capability registry, health, and whoami, on
 * uWebSockets.js. Handlers only translate: every decision is the checkpoint's.
 */
import { Effect, Exit } from "effect"
import uWS from "uWebSockets.js"
import { invoke } from "../src/checkpoint/Checkpoint.ts"
import { auditPublicKey } from "../src/audit/AuditExport.ts"

import { a2aRoutes } from "./a2a.ts"
import { a2aRestRoutes } from "./a2aRest.ts"
import { appRoutes, loadApp } from "./app.ts"
import { authRoutes } from "./auth.ts"
import { chatRoutes } from "./chat.ts"
import { type CorsRoute, makeCors } from "./cors.ts"
import { deviceRoutes } from "./device.ts"
import type { GatewayOptions } from "./options.ts"
import { replyForExit } from "./errors.ts"
import { mcpHandler } from "./mcp.ts"
import { openApiDocument } from "./openapi.ts"
import { capabilityRouteNames, HttpMetrics } from "./metrics.ts"
import { POSITION_HEADER, withPositions } from "./positions.ts"
import { ssoRoutes } from "./sso.ts"
import { pluginOAuthRoutes } from "./pluginOAuth.ts"
import { uploadRoutes } from "./upload.ts"
import { type HttpRequest, jsonBody, jsonError, observeRequests, PayloadTooLarge, route, serveCors, serveWhileReady, Streaming } from "./http.ts"


/**
 * The routes browser clients (the MCP Inspector, browser A2A clients) may call cross-origin: those
 * taking a bearer credential, never a cookie, and the public discovery documents. The MCP SDK
 * client sends MCP-Protocol-Version when it fetches the protected-resource metadata too.
 */
const A2A_REQUEST_HEADERS = ["Authorization", "Content-Type", "Svc-Position", "X-A2A-Extensions", "A2A-Version"]
const CORS_ROUTES: ReadonlyArray<CorsRoute> = [
  { path: "/mcp", methods: ["POST", "GET", "DELETE"], requestHeaders: ["Authorization", "Content-Type", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-ID"], public: false },
  { path: "/a2a", methods: ["POST"], requestHeaders: A2A_REQUEST_HEADERS, public: false },
  // A2A 1.0's HTTP+JSON binding (gateway/a2aRest.ts): its reads are GETs, its push-config deletes DELETEs
  { path: "/a2a/v1/", methods: ["GET", "POST", "DELETE"], requestHeaders: A2A_REQUEST_HEADERS, public: false },
  { path: "/.well-known/", methods: ["GET"], requestHeaders: ["Mcp-Protocol-Version"], public: true }
]
const CORS_EXPOSED_HEADERS = ["Mcp-Session-Id", "WWW-Authenticate", "Svc-Position", "Retry-After", "X-Request-Id"]
// Chromium's cap; a cached preflight grants nothing the actual response does not grant again.
const CORS_MAX_AGE_SECONDS = 7200

const WORKSPACE_ROUTE = /^\/v1\/([^/]+)\/([^/]+)\/(.+)$/

const decodeSlugs = (orgSlug: string, workspaceSlug: string) => {
  try {
    return { orgSlug: decodeURIComponent(orgSlug), workspaceSlug: decodeURIComponent(workspaceSlug) }
  } catch {
    return undefined
  }
}

export interface Gateway {
  readonly port: number
  readonly close: () => void
}

export const startGateway = (options: GatewayOptions): Promise<Gateway> => {
  const app = uWS.App()
  observeRequests(app, { metrics: new HttpMetrics(options.metrics), log: options.log })
  serveWhileReady(app, options.readiness)
  // the node's own pages send its origin too (on a POST), and are no foreign origin
  const ownOrigin = new URL(options.baseUrl).origin
  serveCors(
    app,
    makeCors({ origins: [...options.corsOrigins, ownOrigin], routes: CORS_ROUTES, exposedHeaders: CORS_EXPOSED_HEADERS, maxAgeSeconds: CORS_MAX_AGE_SECONDS })
  )
  const limits = { maxBodyBytes: options.maxBodyBytes }
  const routeNames = capabilityRouteNames(options.registry)
  /** `written`: the positions of the call's writes, answered as `Svc-Position`. */
  const answer = async <A, E>(req: HttpRequest, effect: Effect.Effect<A, E, any>, written?: ReadonlyMap<number, number>) => {
    const exit = await options.run(Effect.annotateLogs(effect, "requestId", req.requestId))
    if (exit._tag === "Failure" && exit.cause._tag === "Fail" && exit.cause.error instanceof PayloadTooLarge) return Streaming
    const reply = replyForExit(exit)
    return written === undefined ? reply : withPositions(reply, written)
  }

  // liveness: answered while the process runs, draining included
  route(app, "get", "/healthz", async () => ({ status: 200, json: options.health() }))
  // readiness: whether a load balancer should send this node requests
  route(app, "get", "/readyz", async () =>
    options.readiness.draining
      ? { ...jsonError(503, "unavailable", "this node is stopping; send requests to another", "draining"), headers: { "retry-after": "1" } }
      : { status: 200, json: { status: "ready", nodeId: options.health().nodeId } }
  )
  // built on the first request, then kept for this server's life (the registry is fixed at start)
  let openApi: ReturnType<typeof openApiDocument> | undefined
  route(app, "get", "/openapi.json", async () => ({ status: 200, json: (openApi ??= openApiDocument(options.registry)) }))

  route(app, "get", "/v1/auth/whoami", (req) =>
    answer(req, invoke({ authorization: req.headers.authorization, surface: "api", capability: "auth.whoami", path: null, input: Effect.succeed({}), trace: req }))
  )

  // Capability routes: `/v1/<path>` for those acting on the caller, else
  // `/v1/{orgSlug}/{workspaceSlug}/<path>`; the registry says which path is which capability.
  const capabilityRoute = (method: "post" | "del") => (req: HttpRequest) => {
    const rest = req.url.slice("/v1/".length)
    const own = options.registry.principalRoutes.get(`${method} ${rest}`)
    const match = own === undefined ? WORKSPACE_ROUTE.exec(req.url) : null
    if (own === undefined && match === null) {
      return Promise.resolve(jsonError(404, "not_found", `no route ${req.method} ${req.url}`, "route_not_found"))
    }
    const path = match === null ? null : decodeSlugs(match[1], match[2])
    if (path === undefined) return Promise.resolve(jsonError(400, "bad_request", "the path is not valid percent-encoded UTF-8", "invalid_path"))
    const capability = own ?? (match === null ? undefined : options.registry.placeRoutes.get(`${method} ${match[3]}`))
    if (capability !== undefined) req.route = routeNames.get(capability) ?? req.route
    const written = new Map<number, number>()
    return answer(
      req,
      invoke({
        authorization: req.headers.authorization,
        cookie: req.headers.cookie,
        surface: "api",
        capability,
        route: `${req.method} ${req.url}`,
        path,
        input: jsonBody(req),
        idempotencyKey: req.headers["idempotency-key"],
        position: req.headers[POSITION_HEADER],
        written,
        clientAddress: req.remoteAddress,
        trace: req
      }),
      written
    )
  }
  // a node told to listen on any port (0) names itself by the port it got
  let publicBase = options.baseUrl
  authRoutes(app, { ...options, limits })
  deviceRoutes(app, { run: options.run, limits, baseUrl: () => publicBase })
  uploadRoutes(app, options)
  ssoRoutes(app, options)
  pluginOAuthRoutes(app, options)
  chatRoutes(app, { run: options.run, limits })
  a2aRoutes(app, { run: options.run, baseUrl: () => publicBase, limits })
  a2aRestRoutes(app, { run: options.run, baseUrl: () => publicBase, limits })
  route(app, "post", "/v1/*", capabilityRoute("post"), limits)
  route(app, "del", "/v1/*", capabilityRoute("del"), limits)

  // MCP (spec 4.2): stateless Streamable HTTP, and the protected-resource metadata its 401 points to
  const mcp = mcpHandler({ baseUrl: options.baseUrl, maxBodyBytes: options.maxBodyBytes, run: options.run })
  route(app, "post", "/mcp", mcp.post, limits)
  route(app, "get", "/mcp", mcp.methodNotAllowed)
  route(app, "del", "/mcp", mcp.methodNotAllowed)
  route(app, "get", "/.well-known/oauth-protected-resource", mcp.resourceMetadata)
  route(app, "get", "/.well-known/oauth-protected-resource/mcp", mcp.resourceMetadata)
  // the public key of the log's signed checkpoints (docs/audit.md), for auditors
  route(app, "get", "/.well-known/svc-audit-key", async () => {
    const exit = await options.run(auditPublicKey)
    return Exit.isSuccess(exit) ? { status: 200, json: exit.value } : jsonError(404, "not_found", "this node signs no checkpoints", "route_not_found")
  })

  // the web app answers every other GET; any other method on an unknown path is a JSON 404
  appRoutes(app, options.appDir === undefined ? undefined : loadApp(options.appDir))
  route(app, "any", "/*", async (req) => jsonError(404, "not_found", `no route ${req.method} ${req.url}`, "route_not_found"))

  return new Promise((resolve, reject) => {
    app.listen(options.host, options.port, (socket) => {
      if (!socket) return reject(new Error(`cannot listen on ${options.host}:${options.port}`))
      const port = uWS.us_socket_local_port(socket)
      if (options.port === 0) publicBase = `http://${options.host === "0.0.0.0" ? "127.0.0.1" : options.host}:${port}`
      resolve({ port, close: () => uWS.us_listen_socket_close(socket) })
    })
  })
}
