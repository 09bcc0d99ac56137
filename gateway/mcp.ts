/**
 * The MCP surface (spec 4.2, `POST {mcp_url}/mcp`): Streamable HTTP in stateless mode, so any node
 * of a cluster answers any request. Each HTTP request gets a fresh SDK `Server` and transport; the
 * tools are the registry's capabilities whose surfaces include `mcp`, and every call goes through
 * the one checkpoint, `invoke`, with surface `mcp`. Failures are stated with the same table as
 * REST (gateway/errors.ts). The protected-resource metadata (RFC 9728) the 401 points to is served
 * here too.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import {
  type CallToolResult,
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool
} from "@modelcontextprotocol/sdk/types.js"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import { Cause, Effect, type Exit } from "effect"
import { authenticate } from "../src/identity/Auth.ts"
import type { Principal } from "../src/checkpoint/Capability.ts"
import { invocableByCredential } from "../src/checkpoint/Access.ts"
import { type AnyCapability, Capabilities, type Registry } from "../src/checkpoint/Capability.ts"
import { invoke } from "../src/checkpoint/Checkpoint.ts"
import { BadRequest } from "../src/platform/Errors.ts"
import { textNestsTooDeep, tooDeepMessage } from "../src/platform/JsonDepth.ts"
import { isObject, type JsonObject } from "../src/checkpoint/ToolSchemas.ts"
import { describeFailure, type FailureDescription } from "./errors.ts"
import { errorBody } from "../src/platform/Failures.ts"
import { type Handler, type HttpReply, type HttpRequest, PayloadTooLarge, RequestAborted, Streaming } from "./http.ts"

export interface McpOptions {
  /** The public base URL; the MCP endpoint is `<baseUrl>/mcp`. */
  readonly baseUrl: string
  /** Largest request body (the route enforces it first; the transport is told the same). */
  readonly maxBodyBytes: number
  /** Runs an effect against the application's services (the gateway's runner). */
  readonly run: <A, E>(effect: Effect.Effect<A, E, any>) => Promise<Exit.Exit<A, E>>
}

export interface McpHandlers {
  /** `POST /mcp`: authenticate, then one JSON-RPC message (or batch) through a fresh stateless server. */
  readonly post: Handler
  /** `GET` and `DELETE /mcp`: a stateless server opens no standalone stream and has no session to end. */
  readonly methodNotAllowed: Handler
  /** `GET /.well-known/oauth-protected-resource[/mcp]`: RFC 9728 metadata. */
  readonly resourceMetadata: Handler
}

/** The argument a workspace- or organization-scoped tool takes to name its place, `<orgSlug>/<workspaceSlug>`. */
export const WORKSPACE_ARGUMENT = "workspace"

const SERVER_INFO = { name: "svc", version: "0.1.0" }

const INSTRUCTIONS =
  "Tools are the platform's capabilities. Tools that act in a workspace take an optional `workspace` " +
  "argument, `<orgSlug>/<workspaceSlug>`; without it they act in the credential's own workspace. A refused " +
  "call returns isError with the JSON `{ error: { code, reason, message } }` the REST API would answer."

/** The one place MCP authenticates a request, so a change of `authenticate`'s signature is one line here. */
const authenticateBearer = (authorization: string | undefined) => authenticate({ authorization })

// Hop-by-hop or length headers: uWS writes its own.
const UNFORWARDED = new Set(["content-length", "transfer-encoding", "connection", "keep-alive"])

const trimSlash = (url: string) => url.replace(/\/+$/, "")

/** Text safe inside a quoted-string of an auth-param. */
const quotable = (text: string) => text.replace(/["\\\r\n]/g, " ")

const declaresProperty = (schema: JsonObject, name: string): boolean => {
  const own = isObject(schema.properties) && Object.hasOwn(schema.properties, name)
  const branches = schema.anyOf ?? schema.oneOf
  return own || (Array.isArray(branches) && branches.some((b) => isObject(b) && declaresProperty(b, name)))
}

const workspaceProperty = {
  type: "string",
  pattern: "^[^/]+/[^/]+$",
  description: "The workspace to act in, `<orgSlug>/<workspaceSlug>`; the credential's own when omitted."
}

/** Adds the optional `workspace` argument to an object schema (and to each object branch of a union). */
const withWorkspace = (schema: JsonObject): JsonObject => {
  const branches = schema.anyOf ?? schema.oneOf
  const result: JsonObject = { ...schema, properties: { ...(isObject(schema.properties) ? schema.properties : {}), [WORKSPACE_ARGUMENT]: workspaceProperty } }
  if (Array.isArray(branches)) {
    const key = schema.anyOf !== undefined ? "anyOf" : "oneOf"
    result[key] = branches.map((b) => (isObject(b) && b.type === "object" ? withWorkspace(b) : b))
  }
  return result
}

/** Capabilities that act in a place take the `workspace` argument (unless their input already has a field of that name). */
const takesPlace = (capability: AnyCapability): boolean => (["workspace", "organization"] as ReadonlyArray<string>).includes(capability.scope)

interface McpTool {
  readonly tool: Tool
  readonly capability: AnyCapability
  /** The `workspace` argument is the tool's, stripped before the checkpoint sees the input. */
  readonly placeArgument: boolean
}

/** Undefined for a capability whose input is no object, which no MCP tool can take. */
const toolOf = (capability: AnyCapability, registry: Registry): McpTool | undefined => {
  const { input, output } = registry.toolSchemas.get(capability.name)!
  if (input === undefined) return undefined
  const placeArgument = takesPlace(capability) && !declaresProperty(input, WORKSPACE_ARGUMENT)
  // structuredContent is the encoded output, which `output` describes; clients check it against it
  const tool: Tool = {
    name: capability.name,
    description: capability.description,
    inputSchema: (placeArgument ? withWorkspace(input) : input) as Tool["inputSchema"],
    ...(output === undefined ? {} : { outputSchema: output as Tool["outputSchema"] }),
    annotations: { readOnlyHint: !capability.mutating, destructiveHint: capability.destructive }
  }
  return { tool, capability, placeArgument }
}

const toolsOf = (registry: Registry) =>
  Effect.gen(function* () {
    const tools = new Map<string, McpTool>()
    for (const capability of registry.all) {
      if (!capability.surfaces.includes("mcp")) continue
      const tool = toolOf(capability, registry)
      if (tool === undefined) yield* Effect.logWarning(`mcp: capability ${capability.name} has no object input schema; it is not offered as a tool`)
      else tools.set(capability.name, tool)
    }
    return tools as ReadonlyMap<string, McpTool>
  })

type Path = { readonly orgSlug: string; readonly workspaceSlug: string } | null

/** Splits the `workspace` argument off the tool's arguments. */
const placeOf = (args: JsonObject): { readonly path: Path; readonly input: JsonObject } | BadRequest => {
  if (!Object.hasOwn(args, WORKSPACE_ARGUMENT)) return { path: null, input: args }
  const { [WORKSPACE_ARGUMENT]: named, ...input } = args
  const parts = typeof named === "string" ? named.split("/") : []
  if (parts.length !== 2 || parts[0] === "" || parts[1] === "") {
    return new BadRequest({ reason: "invalid_workspace", message: "workspace must be `<orgSlug>/<workspaceSlug>`" })
  }
  return { path: { orgSlug: parts[0], workspaceSlug: parts[1] }, input }
}

const errorResult = (failure: FailureDescription): CallToolResult => ({
  isError: true,
  content: [{ type: "text", text: JSON.stringify(errorBody(failure)) }]
})

const successResult = (output: unknown): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(output) }],
  ...(isObject(output) ? { structuredContent: output } : {})
})

/** A transport-level refusal, shaped as the SDK's own (JSON-RPC error -32000 unless told, no id). */
const jsonRpcError = (status: number, message: string, headers: Record<string, string> = {}, code = -32000, data?: unknown): HttpReply => ({
  status,
  headers,
  json: { jsonrpc: "2.0", error: { code, message, ...(data === undefined ? {} : { data }) }, id: null }
})

/** The fetch Request the SDK transport reads, from the gateway's copy of the uWS request. */
const toFetchRequest = (req: HttpRequest, body: Buffer, endpoint: string): Request => {
  const headers = new Headers()
  for (const name in req.headers) if (!UNFORWARDED.has(name)) headers.set(name, req.headers[name])
  const url = req.query === "" ? endpoint : `${endpoint}?${req.query}`
  return new Request(url, { method: req.method, headers, body: body.length === 0 ? undefined : body, signal: req.signal })
}

/** The transport's Response as a gateway reply; with JSON responses enabled the body is never a stream left open. */
const toReply = async (response: Response): Promise<HttpReply> => {
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    if (!UNFORWARDED.has(name)) headers[name] = value
  })
  return { status: response.status, headers, text: await response.text() }
}

export const mcpHandler = (options: McpOptions): McpHandlers => {
  const baseUrl = trimSlash(options.baseUrl)
  const endpoint = `${baseUrl}/mcp`
  const metadataUrl = `${baseUrl}/.well-known/oauth-protected-resource`
  // only elicitation uses the server's validator, and these servers never elicit: one is plenty
  const validator = new AjvJsonSchemaValidator()

  // the registry is fixed for the node's life: its tools are derived once
  let tools: Promise<ReadonlyMap<string, McpTool>> | undefined
  const loadTools = () =>
    (tools ??= options.run(Effect.flatMap(Capabilities, (registry) => toolsOf(registry))).then((exit) => {
      if (exit._tag === "Success") return exit.value
      tools = undefined
      throw new Error(`mcp: the capability registry is not available: ${Cause.pretty(exit.cause)}`)
    }))

  /** `req`: the HTTP request the call came in, told what it invoked and what failed on the server's side, for its log line. */
  const callTool = async (req: HttpRequest, authorization: string, tool: McpTool | undefined, name: string, args: JsonObject): Promise<CallToolResult> => {
    if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`)
    const place = tool.placeArgument ? placeOf(args) : { path: null, input: args }
    if (place instanceof BadRequest) return errorResult(describeFailure(Cause.fail(place)))
    const exit = await options.run(
      invoke({ authorization, surface: "mcp", capability: tool.capability.name, path: place.path, input: Effect.succeed(place.input), idempotencyKey: undefined, trace: req })
    )
    if (exit._tag === "Success") return successResult(exit.value)
    const described = describeFailure(exit.cause)
    req.failure ??= described.failure
    return errorResult(described)
  }

  /** The tools the credential may call in its own place; the checkpoint still decides each call. */
  const listTools = async (principal: Principal, known: ReadonlyMap<string, McpTool>) => {
    const exit = await options.run(invocableByCredential(principal, "mcp"))
    if (exit._tag === "Failure") throw new McpError(ErrorCode.InternalError, describeFailure(exit.cause).message)
    const callable = new Set(exit.value.map((c) => c.name))
    return { tools: [...known.values()].filter((t) => callable.has(t.capability.name)).map((t) => t.tool) }
  }

  const serverFor = (req: HttpRequest, authorization: string, principal: Principal, known: ReadonlyMap<string, McpTool>): Server => {
    const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS, jsonSchemaValidator: validator })
    server.setRequestHandler(ListToolsRequestSchema, () => listTools(principal, known))
    server.setRequestHandler(CallToolRequestSchema, (request) =>
      callTool(req, authorization, known.get(request.params.name), request.params.name, request.params.arguments ?? {})
    )
    return server
  }

  const unauthorized = (failure: FailureDescription, invalidToken: boolean): HttpReply => ({
    status: failure.status,
    headers: {
      "www-authenticate": `Bearer resource_metadata="${metadataUrl}"${invalidToken ? `, error="invalid_token", error_description="${quotable(failure.message)}"` : ""}`
    },
    json: errorBody(failure)
  })

  const post: Handler = async (req) => {
    const authorization = req.headers.authorization
    const authenticated = await options.run(authenticateBearer(authorization))
    if (authenticated._tag === "Failure") {
      const failure = describeFailure(authenticated.cause)
      // RFC 6750: a request with no credential gets no error code; a bad one gets invalid_token
      return failure.status === 401 ? unauthorized(failure, failure.reason !== "missing_credential") : { status: failure.status, json: errorBody(failure), failure: failure.failure }
    }
    let body: Buffer
    try {
      body = await req.body()
    } catch (error) {
      // a 413 has been sent, or the client is gone: nothing to answer
      if (error instanceof PayloadTooLarge || error instanceof RequestAborted) return Streaming
      throw error
    }
    // the transport parses the body itself: its nesting is bounded first, as parseJsonBody does for every other route
    if (textNestsTooDeep(body)) {
      return jsonRpcError(400, `Invalid Request: the body is refused: ${tooDeepMessage}`, {}, ErrorCode.InvalidRequest, { code: "bad_request", reason: "json_too_deep" })
    }
    const known = await loadTools()
    const server = serverFor(req, authorization!, authenticated.value, known)
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: options.maxBodyBytes
    })
    try {
      await server.connect(transport)
      const response = await transport.handleRequest(toFetchRequest(req, body, endpoint))
      return await toReply(response)
    } finally {
      await server.close()
    }
  }

  const methodNotAllowed: Handler = async () => jsonRpcError(405, "Method not allowed.", { allow: "POST" })

  const resourceMetadata: Handler = async () => ({
    status: 200,
    // no authorization server yet: API keys are issued by the platform itself, not through OAuth
    json: { resource: endpoint, bearer_methods_supported: ["header"], resource_name: "svc MCP" }
  })

  return { post, methodNotAllowed, resourceMetadata }
}
