/**
 * A2A 1.0's HTTP+JSON binding under `/a2a/v1`, beside JSON-RPC on `/a2a`: the same 1.0 methods
 * (src/a2a/V1.ts), the same capabilities, addressed by path (`POST /message:send`,
 * `GET /tasks/{id}`, `POST /tasks/{id}:cancel`, ...). Streams carry one StreamResponse per `data:`
 * line; an error is an HTTP status with a `google.rpc.Status` body whose ErrorInfo names the A2A
 * reason. The binding is 1.0's only: a request must say `A2A-Version: 1.0` (0.3 had its own REST
 * paths, not served here), any other version or none gets VersionNotSupportedError.
 */
import { Cause, Exit, Option } from "effect"
import type uWS from "uWebSockets.js"
import {
  A2A_CONTENT_TYPE_NOT_SUPPORTED,
  A2A_PUSH_NOT_SUPPORTED,
  A2A_TASK_NOT_CANCELABLE,
  A2A_TASK_NOT_FOUND,
  A2A_UNSUPPORTED_OPERATION,
  A2A_VERSION_NOT_SUPPORTED,
  JSONRPC_INVALID_PARAMS,
  JSONRPC_METHOD_NOT_FOUND,
  versionOf
} from "../src/a2a/Protocol.ts"
import type { Principal } from "../src/checkpoint/Capability.ts"
import { Overloaded } from "../src/platform/Errors.ts"
import { type A2aRouteOptions, answerMethod, platformDomain, callerOf, openMethodStream, requestCalls, type RpcError, rpcErrorOf, v1Method } from "./a2a.ts"
import { type HttpReply, type HttpRequest, MalformedJson, parseJsonBody, PayloadTooLarge, route, Streaming } from "./http.ts"
import { withPositions } from "./positions.ts"
import { A2A_ERRORS, errorInfoOf } from "../src/a2a/V1.ts"
import { openSse } from "./sse.ts"

const VERSION_HEADER = "a2a-version"
/** gRPC status names of the platform's own refusals (its HTTP meaning, kept in the JSON-RPC error's data). */
const STATUS_NAMES: Readonly<Record<number, string>> = { 400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 402: "FAILED_PRECONDITION", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 409: "ABORTED", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE" }

/** The HTTP answer of a failed method: its status, and a google.rpc.Status body whose details are its ErrorInfo. */
const restErrorIn = (error: RpcError, platformDomain: string): HttpReply => {
  const data = error.data as { status?: number; retryAfterSeconds?: number } | undefined
  const known = A2A_ERRORS[error.code]?.http
  const status = known?.[0] ?? data?.status ?? 500
  return {
    status,
    ...(data?.retryAfterSeconds === undefined ? {} : { headers: { "retry-after": String(data.retryAfterSeconds) } }),
    json: { error: { code: status, status: known?.[1] ?? STATUS_NAMES[status] ?? "INTERNAL", message: error.message, details: [errorInfoOf(error, platformDomain)] } }
  }
}

/** A query value as the method's params take it: numbers and booleans from their text. */
const queryValue = (value: string): unknown => (/^\d+$/.test(value) ? Number(value) : value === "true" ? true : value === "false" ? false : value)

const queryParams = (req: HttpRequest): Record<string, unknown> =>
  Object.fromEntries([...new URLSearchParams(req.query)].map(([key, value]) => [key, queryValue(value)]))

/** Where a request's params come from: its body, its query, and the task id in its path. */
type ParamsOf = (req: HttpRequest, body: Record<string, unknown>) => Record<string, unknown>

const fromBody: ParamsOf = (_req, body) => body
const fromQuery: ParamsOf = (req) => queryParams(req)
const taskFromPath: ParamsOf = (req) => ({ ...queryParams(req), id: decodeURIComponent(req.params[0] ?? "").split(":")[0] })

export const a2aRestRoutes = (app: uWS.TemplatedApp, options: A2aRouteOptions): void => {
  const restError = (error: RpcError) => restErrorIn(error, platformDomain(options))
  const stream = async (principal: Principal, req: HttpRequest, res: uWS.HttpResponse, method: string, params: Record<string, unknown>): Promise<HttpReply | typeof Streaming> => {
    const served = v1Method(method)!
    const exit = await openMethodStream(options, principal, requestCalls(req), served, params)
    // a refusal is an HTTP answer: the stream is not opened yet
    if (Exit.isFailure(exit)) {
      const refused = restError(rpcErrorOf(exit.cause))
      return Option.getOrUndefined(Cause.failureOption(exit.cause)) instanceof Overloaded ? { ...refused, status: 503 } : refused
    }
    const sse = openSse(res)
    exit.value.listen({ event: (event) => sse.data(served.event(event)), done: () => sse.end() })
    return Streaming
  }

  const handle = (method: string | ((req: HttpRequest) => string | undefined), paramsOf: ParamsOf) => async (req: HttpRequest, res: uWS.HttpResponse): Promise<HttpReply | typeof Streaming> => {
    const caller = await callerOf(options, req)
    if ("refused" in caller) return caller.refused
    const version = req.headers[VERSION_HEADER]?.trim() ?? ""
    if (versionOf(version) !== "1.0") {
      return restError({ code: A2A_VERSION_NOT_SUPPORTED, message: `A2A version '${version}' is not supported on this binding; it serves 1.0 (JSON-RPC on /a2a serves 0.3 too)` })
    }
    const name = typeof method === "string" ? method : method(req)
    if (name === undefined) return restError({ code: JSONRPC_METHOD_NOT_FOUND, message: `No A2A method at ${req.method} ${req.url}` })
    if (name === "push") return restError({ code: A2A_PUSH_NOT_SUPPORTED, message: "Push Notification is not supported" })
    let body: unknown = {}
    try {
      const raw = await req.body()
      if (raw.length > 0) body = parseJsonBody(raw)
    } catch (error) {
      if (error instanceof PayloadTooLarge) return Streaming
      return restError({ code: JSONRPC_INVALID_PARAMS, message: error instanceof MalformedJson ? error.message : "the body is not JSON" })
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) return restError({ code: JSONRPC_INVALID_PARAMS, message: "the body must be a JSON object" })
    const params = paramsOf(req, body as Record<string, unknown>)
    if (v1Method(name)!.streams) return stream(caller.principal, req, res, name, params)
    const calls = requestCalls(req)
    const outcome = await answerMethod(options, caller.principal, calls, v1Method(name)!, params)
    return withPositions("result" in outcome ? { status: 200, json: outcome.result } : restError(outcome.error), calls.written)
  }

  // `POST /tasks/{id}:cancel` and `:subscribe`: the verb follows the id in one path segment
  const taskVerb = (req: HttpRequest) => {
    const verb = decodeURIComponent(req.params[0] ?? "").split(":")[1]
    return verb === "cancel" ? "CancelTask" : verb === "subscribe" ? "SubscribeToTask" : undefined
  }
  const base = "/a2a/v1"
  const limits = options.limits
  route(app, "post", `${base}/message:send`, handle("SendMessage", fromBody), limits)
  route(app, "post", `${base}/message:stream`, handle("SendStreamingMessage", fromBody), limits)
  route(app, "get", `${base}/tasks`, handle("ListTasks", fromQuery))
  route(app, "get", `${base}/tasks/:id`, handle("GetTask", taskFromPath))
  route(app, "post", `${base}/tasks/:idAndVerb`, handle(taskVerb, taskFromPath), limits)
  route(app, "get", `${base}/extendedAgentCard`, handle("GetExtendedAgentCard", fromQuery))
  // push-notification configs, under a task: refused, as the card says pushNotifications false
  for (const path of [`${base}/tasks/:id/pushNotificationConfigs`, `${base}/tasks/:id/pushNotificationConfigs/:configId`]) {
    route(app, "any", path, handle(() => "push", fromQuery), limits)
  }
}
