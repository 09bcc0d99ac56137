/**
 * A2A v0.3 and 1.0 on one JSON-RPC 2.0 endpoint, `POST /a2a` (spec 4.3, 7.4), and the public Agent
 * Card. `A2A-Version` picks the version: absent or 0.3 is 0.3 (its method names), 1.0 is 1.0 (its
 * PascalCase names, its shapes from src/a2a/V1.ts), any other -32009. Every method is a capability
 * on the `a2a` surface, invoked through the checkpoint with the caller's Bearer credential. The
 * streaming methods answer with SSE, one JSON-RPC response envelope per `data:` line. Batches (docs/decisions.md): every entry is answered
 * in order; a streaming method in a batch, and an id repeated in a batch, get -32600.
 */
import { Cause, Effect, Exit, Option, Schema } from "effect"
import { createHash } from "node:crypto"
import type uWS from "uWebSockets.js"
import { publicAgentCard } from "../src/a2a/Card.ts"
import {
  A2A_CONTENT_TYPE_NOT_SUPPORTED,
  A2A_METHODS,
  A2A_PUSH_NOT_SUPPORTED,
  A2A_TASK_NOT_CANCELABLE,
  A2A_TASK_NOT_FOUND,
  A2A_UNSUPPORTED_OPERATION,
  A2A_VERSION_NOT_SUPPORTED,
  JSONRPC_INTERNAL_ERROR,
  JSONRPC_INVALID_PARAMS,
  JSONRPC_INVALID_REQUEST,
  JSONRPC_METHOD_NOT_FOUND,
  JSONRPC_PARSE_ERROR,
  JSONRPC_REFUSED,
  PUSH_CONFIG_PREFIX,
  STREAMING_METHODS,
  type A2aVersion,
  unservedVersion,
  versionOf
} from "../src/a2a/Protocol.ts"
import { CardSigner, JWKS_PATH } from "../src/a2a/CardSignature.ts"
import { cardToV1, errorInfoOf, streamEventToV1, V1_METHODS, V1_PUSH_CONFIG_METHODS } from "../src/a2a/V1.ts"
import { authenticate } from "../src/identity/Auth.ts"
import type { Principal } from "../src/checkpoint/Capability.ts"
import { invoke } from "../src/checkpoint/Checkpoint.ts"
import { Overloaded } from "../src/platform/Errors.ts"
import { errorFields } from "../src/platform/Logging.ts"
import type { Started } from "../src/platform/Relay.ts"
import { type Task, TaskStreamEvent } from "../src/platform/Wire.ts"
import { describeFailure, replyForFailure } from "./errors.ts"
import { type HttpReply, type HttpRequest, MalformedJson, parseJsonBody, PayloadTooLarge, route, Streaming } from "./http.ts"
import { POSITION_HEADER, withPositions } from "./positions.ts"
import { openSse } from "./sse.ts"

/** How long a client may keep the public card before asking again (A2A 1.0, 8.6: the card says Cache-Control). */
const CARD_MAX_AGE_SECONDS = 300

/** The A2A version the client speaks (A2A 1.0's negotiation; absent means 0.3). */
const VERSION_HEADER = "a2a-version"

export interface A2aRouteOptions {
  readonly run: <A, E>(effect: Effect.Effect<A, E, any>) => Promise<Exit.Exit<A, E>>
  /** The public base URL, once the gateway listens (a node on port 0 learns its port then). */
  readonly baseUrl: () => string
  readonly limits: { readonly maxBodyBytes: number }
}

type Id = string | number | null

export interface RpcError {
  readonly code: number
  readonly message: string
  readonly data?: unknown
}

const failure = (id: Id, error: RpcError) => ({ jsonrpc: "2.0" as const, id, error })

/** The domain of the platform's own ErrorInfo reasons: the host the node is reached at. */
export const platformDomain = (options: A2aRouteOptions) => new URL(options.baseUrl()).host

/**
 * An answer as the request's version states its error: 1.0's `data` is a list of details, the
 * error's google.rpc.ErrorInfo (spec 9.5); 0.3's is the platform's object, or none, as before.
 */
const inVersionOf = (options: A2aRouteOptions, req: HttpRequest) => <T extends object | undefined>(answer: T): T => {
  if (versionOf(req.headers[VERSION_HEADER]) !== "1.0" || answer === undefined || !("error" in answer)) return answer
  const error = answer.error as RpcError
  return { ...answer, error: { code: error.code, message: error.message, data: [errorInfoOf(error, platformDomain(options))] } }
}
const success = (id: Id, result: unknown) => ({ jsonrpc: "2.0" as const, id, result })

/** What a streaming method's updates carry, as A2A has them. */
const encodeStreamEvent = Schema.encodeSync(TaskStreamEvent)

const METHOD_CAPABILITY: Readonly<Record<string, string>> = {
  "message/send": "a2a.message.send",
  "message/stream": "a2a.message.stream",
  "tasks/get": "a2a.tasks.get",
  "tasks/resubscribe": "a2a.tasks.resubscribe",
  "tasks/cancel": "a2a.tasks.cancel",
  "agent/getAuthenticatedExtendedCard": "a2a.card.extended"
}

/**
 * A method as one A2A version names it: the capability that runs it, its params as the capability
 * takes them, and its answer and stream events in that version's shape (0.3's are the
 * capabilities' own; 1.0's are mapped by src/a2a/V1.ts).
 */
export interface ServedMethod {
  readonly capability: string
  readonly streams: boolean
  readonly input: (params: Record<string, unknown>) => unknown
  readonly result: (value: unknown) => unknown
  readonly event: (event: TaskStreamEvent) => unknown
}

const v03Method = (method: string): ServedMethod | undefined =>
  (A2A_METHODS as ReadonlyArray<string>).includes(method)
    ? { capability: METHOD_CAPABILITY[method], streams: STREAMING_METHODS.has(method), input: (params) => params, result: (value) => value, event: encodeStreamEvent }
    : undefined

export const v1Method = (method: string): ServedMethod | undefined => {
  const served = Object.hasOwn(V1_METHODS, method) ? V1_METHODS[method] : undefined
  return served === undefined ? undefined : { ...served, event: streamEventToV1 }
}

const methodIn = (version: A2aVersion, method: string) => (version === "1.0" ? v1Method(method) : v03Method(method))

const isPushConfig = (version: A2aVersion, method: string) => (version === "1.0" ? V1_PUSH_CONFIG_METHODS.has(method) : method.startsWith(PUSH_CONFIG_PREFIX))

/**
 * Errors that say a request is not one the server can run: answered even without an id (with id
 * null), as the A2A reference server and the A2A TCK do, so the sender learns of its mistake.
 */
const REFUSED_AS_REQUEST: ReadonlySet<number> = new Set([JSONRPC_INVALID_REQUEST, JSONRPC_METHOD_NOT_FOUND, JSONRPC_INVALID_PARAMS, A2A_VERSION_NOT_SUPPORTED])

/** A request's declared type is JSON: `application/json` or a `+json` type; none declared is read as JSON. */
const isJsonContentType = (header: string | undefined) => {
  const type = header?.split(";")[0]?.trim().toLowerCase() ?? ""
  return type === "" || type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"))
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** A failure of a method as JSON-RPC states it (7.4); refusals of the checkpoint keep their HTTP meaning in `data`. */
export const rpcErrorOf = (cause: Cause.Cause<unknown>): RpcError => {
  const error = Option.getOrUndefined(Cause.failureOption(cause)) as { _tag?: string; message?: string; reason?: string; limit?: string; bound?: string; retryAfterSeconds?: number } | undefined
  switch (error?._tag) {
    case "TaskNotFound":
      return { code: A2A_TASK_NOT_FOUND, message: "Task not found" }
    case "TaskNotCancelable":
      return { code: A2A_TASK_NOT_CANCELABLE, message: "Task cannot be canceled: it has already ended" }
    case "TaskNotSubscribable":
      return { code: A2A_UNSUPPORTED_OPERATION, message: `This operation is not supported: ${error.message}` }
    case "RateLimited":
      return { code: JSONRPC_REFUSED, message: "rate_limited", data: { status: 429, code: "rate_limited", reason: error.limit, retryAfterSeconds: error.retryAfterSeconds } }
    case "Overloaded":
      // the node holds as many turns or streams as it may (docs/decisions.md, "Admission control")
      return { code: JSONRPC_REFUSED, message: "engine_unavailable", data: { status: 503, code: "engine_unavailable", reason: error.bound, retryAfterSeconds: error.retryAfterSeconds } }
    case "AttachmentRefused": {
      // a file part that breaks a rule: A2A's own codes for a type and for a file by URI, bad params otherwise
      const data = { code: "attachment_refused", reason: error.reason }
      if (error.reason === "unsupported_type") return { code: A2A_CONTENT_TYPE_NOT_SUPPORTED, message: `Content type not supported: ${error.message}`, data }
      if (error.reason === "file_by_uri") return { code: A2A_UNSUPPORTED_OPERATION, message: `This operation is not supported: ${error.message}`, data }
      return { code: JSONRPC_INVALID_PARAMS, message: `Invalid params: ${error.message}`, data }
    }
  }
  const described = describeFailure(cause)
  if (described.status === 500) return { code: JSONRPC_INTERNAL_ERROR, message: "Internal error" }
  // storage or the log did not answer: internal to the server, and worth a retry (the data says so)
  if (described.status > 500) return { code: JSONRPC_INTERNAL_ERROR, message: `Internal error: ${described.message}`, data: { status: described.status, code: described.code, reason: described.reason } }
  // an organization-level credential names no workspace, and A2A has no way to name one: a refusal, not bad params
  const badParams = described.code === "bad_request" && described.reason !== "workspace_required"
  if (badParams || error?._tag === "TaskTerminal" || error?._tag === "TaskNotAwaitingInput") {
    return { code: JSONRPC_INVALID_PARAMS, message: `Invalid params: ${described.message}`, data: { reason: described.reason } }
  }
  return { code: JSONRPC_REFUSED, message: described.message, data: { status: described.status, code: described.code, reason: described.reason } }
}

/**
 * The `Retry-After` of an answer that is a node's refusal for load (`Overloaded`): JSON-RPC says it
 * in the error's data, HTTP clients and proxies read the header.
 */
const retryAfterOf = (answer: object | undefined): Record<string, string> | undefined => {
  const data = (answer as { error?: { data?: { status?: number; retryAfterSeconds?: number } } } | undefined)?.error?.data
  return data?.status === 503 && data.retryAfterSeconds !== undefined ? { "retry-after": String(data.retryAfterSeconds) } : undefined
}

/** A request object checked against JSON-RPC 2.0; an error when it is not a valid request. */
const envelopeOf = (entry: unknown): { readonly id: Id; readonly notification: boolean; readonly method: string; readonly params: unknown } | { readonly id: Id; readonly error: RpcError } => {
  if (!isObject(entry)) return { id: null, error: { code: JSONRPC_INVALID_REQUEST, message: "Invalid Request: not an object" } }
  const rawId = entry.id
  const idReadable = rawId === undefined || rawId === null || typeof rawId === "string" || (typeof rawId === "number" && Number.isFinite(rawId))
  const id: Id = idReadable ? ((rawId ?? null) as Id) : null
  if (!idReadable) return { id: null, error: { code: JSONRPC_INVALID_REQUEST, message: "Invalid Request: id must be a string, a number or null" } }
  if (entry.jsonrpc !== "2.0") return { id, error: { code: JSONRPC_INVALID_REQUEST, message: "Invalid Request: jsonrpc must be \"2.0\"" } }
  if (typeof entry.method !== "string") return { id, error: { code: JSONRPC_INVALID_REQUEST, message: "Invalid Request: method must be a string" } }
  if (entry.params !== undefined && (typeof entry.params !== "object" || entry.params === null)) {
    return { id, error: { code: JSONRPC_INVALID_REQUEST, message: "Invalid Request: params must be an object or an array" } }
  }
  return { id, notification: rawId === undefined, method: entry.method, params: entry.params }
}

/**
 * What one request's calls share: the positions its reads must see, those its writes reached, and
 * the request, whose log line names what they invoked and what failed on the server's side.
 */
export interface RequestCalls {
  readonly req: HttpRequest
  readonly sent: string | undefined
  readonly written: Map<number, number>
}

export const requestCalls = (req: HttpRequest): RequestCalls => ({ req, sent: req.headers[POSITION_HEADER], written: new Map() })

/** Runs a method's capability through the checkpoint for the caller. */
export const callMethod = async (options: A2aRouteOptions, principal: Principal, calls: RequestCalls, served: ServedMethod, params: unknown) => {
  const exit = await options.run(
    invoke({
      authorization: undefined,
      principal,
      surface: "a2a",
      capability: served.capability,
      path: null,
      input: Effect.succeed(served.input((params ?? {}) as Record<string, unknown>)),
      position: calls.sent,
      written: calls.written,
      trace: calls.req
    })
  )
  if (Exit.isFailure(exit)) calls.req.failure ??= describeFailure(exit.cause).failure
  return exit
}

/** A stream a method opens, or why it opens none. */
export const openMethodStream = async (options: A2aRouteOptions, principal: Principal, calls: RequestCalls, served: ServedMethod, params: unknown) =>
  (await callMethod(options, principal, calls, served, params)) as Exit.Exit<Started<TaskStreamEvent, void>, unknown>

/** A non-streaming method: its result in its version's shape, or its error. */
export const answerMethod = async (options: A2aRouteOptions, principal: Principal, calls: RequestCalls, served: ServedMethod, params: unknown): Promise<{ result: unknown } | { error: RpcError }> => {
  const exit = await callMethod(options, principal, calls, served, params)
  if (Exit.isFailure(exit)) return { error: rpcErrorOf(exit.cause) }
  if (served.capability === "a2a.card.extended") {
    // the extended card names the endpoints this gateway serves, like the public one
    const { url, supportedInterfaces } = publicAgentCard(options.baseUrl())
    const card = served.result({ ...(exit.value as object), url, supportedInterfaces }) as object
    // 1.0's card is signed, the extended one as the public one (0.3's carries no signatures)
    return { result: served.result === V1_METHODS.GetExtendedAgentCard!.result ? await signedCard(options, card) : card }
  }
  return { result: served.result(exit.value) }
}

/** What the node's card key gives: a signer of 1.0 cards and its JWK Set (loaded at start, so this cannot fail). */
const cardSigner = async (options: A2aRouteOptions) => Exit.getOrElse(await options.run(CardSigner), (cause) => { throw Cause.squash(cause) })

const signedCard = async (options: A2aRouteOptions, card: object): Promise<object> => (await cardSigner(options)).sign(card, options.baseUrl())

/** The caller, or the 401 that answers a request without a valid credential. */
export const callerOf = async (options: A2aRouteOptions, req: HttpRequest): Promise<{ principal: Principal } | { refused: HttpReply }> => {
  const authenticated = await options.run(authenticate({ authorization: req.headers.authorization }))
  if (Exit.isFailure(authenticated)) return { refused: { ...replyForFailure(authenticated.cause), headers: { "www-authenticate": `Bearer realm="a2a"` } } }
  return { principal: authenticated.value }
}

export const a2aRoutes = (app: uWS.TemplatedApp, options: A2aRouteOptions): void => {
  // what the card was last changed by: the node that serves it, started with this code and settings
  const cardModified = new Date(Math.floor(Date.now() / 1000) * 1000).toUTCString()
  // the card in the version the client asks for (a 1.0 client says so in A2A-Version); 0.3's lists the 1.0 interfaces too
  route(app, "get", "/.well-known/agent-card.json", async (req) => {
    const v1 = versionOf(req.headers[VERSION_HEADER]) === "1.0"
    const card = v1 ? cardToV1(publicAgentCard(options.baseUrl())) : publicAgentCard(options.baseUrl())
    // weak: a 1.0 card's signature differs each time it is made (ECDSA), the card it signs does not
    const etag = `W/"${createHash("sha256").update(JSON.stringify(card)).digest("base64url")}"`
    const headers = { vary: "A2A-Version", "cache-control": `public, max-age=${CARD_MAX_AGE_SECONDS}`, etag, "last-modified": cardModified }
    // If-None-Match compares weakly (RFC 9110 13.1.2); without it, If-Modified-Since decides
    const known = req.headers["if-none-match"]?.split(",").map((tag) => tag.trim().replace(/^W\//, ""))
    const since = req.headers["if-modified-since"]
    const unchanged = known !== undefined ? known.includes(etag.replace(/^W\//, "")) || known.includes("*") : since !== undefined && Date.parse(since) >= Date.parse(cardModified)
    if (unchanged) return { status: 304, headers }
    return { status: 200, headers, json: v1 ? await signedCard(options, card) : card }
  })
  // the public key of the 1.0 card's signatures, which their `jku` names
  route(app, "get", JWKS_PATH, async () => {
    return { status: 200, json: (await cardSigner(options)).jwks }
  })

  const dispatch = async (principal: Principal, calls: RequestCalls, entry: unknown, inBatch: boolean): Promise<object | undefined> => {
    const envelope = envelopeOf(entry)
    if ("error" in envelope) return failure(envelope.id, envelope.error)
    const { id, method, params } = envelope
    // a notification that runs is answered with nothing; one refused as a request (docs/a2a.md) is answered, with id null
    const reply = (body: ReturnType<typeof success> | ReturnType<typeof failure>) =>
      envelope.notification && !("error" in body && REFUSED_AS_REQUEST.has(body.error.code)) ? undefined : body
    const version = versionOf(calls.req.headers[VERSION_HEADER])
    if (version === undefined) return reply(failure(id, unservedVersion(calls.req.headers[VERSION_HEADER])!))
    if (isPushConfig(version, method)) return reply(failure(id, { code: A2A_PUSH_NOT_SUPPORTED, message: "Push Notification is not supported" }))
    const served = methodIn(version, method)
    if (served === undefined) return reply(failure(id, { code: JSONRPC_METHOD_NOT_FOUND, message: `Method not found: ${method} (A2A ${version})` }))
    if (params !== undefined && !isObject(params)) return reply(failure(id, { code: JSONRPC_INVALID_PARAMS, message: "Invalid params: A2A methods take named params (an object)" }))
    if (inBatch && served.streams) return reply(failure(id, { code: JSONRPC_INVALID_REQUEST, message: `Invalid Request: ${method} streams and cannot be part of a batch` }))
    try {
      const outcome = await answerMethod(options, principal, calls, served, params)
      return reply("result" in outcome ? success(id, outcome.result) : failure(id, outcome.error))
    } catch (error) {
      calls.req.failure ??= errorFields(error)
      return reply(failure(id, { code: JSONRPC_INTERNAL_ERROR, message: "Internal error" }))
    }
  }

  /** message/stream and tasks/resubscribe: SSE of response envelopes until the task settles. */
  const stream = async (principal: Principal, calls: RequestCalls, res: uWS.HttpResponse, id: Id, served: ServedMethod, params: unknown): Promise<HttpReply | typeof Streaming> => {
    const inVersion = inVersionOf(options, calls.req)
    const exit = await openMethodStream(options, principal, calls, served, params)
    // a node full of turns or streams opens no stream: 503 with Retry-After, the JSON-RPC error as the body
    if (Exit.isFailure(exit) && Option.getOrUndefined(Cause.failureOption(exit.cause)) instanceof Overloaded) {
      const refused = failure(id, rpcErrorOf(exit.cause))
      return { status: 503, headers: retryAfterOf(refused), json: inVersion(refused) }
    }
    const sse = openSse(res)
    // a refusal is the stream's one event: streaming clients read every answer as SSE
    if (Exit.isFailure(exit)) {
      sse.data(inVersion(failure(id, rpcErrorOf(exit.cause))))
      sse.end()
      return Streaming
    }
    exit.value.listen({ event: (result) => sse.data(success(id, served.event(result))), done: () => sse.end() })
    return Streaming
  }

  const handler = async (req: HttpRequest, res: uWS.HttpResponse): Promise<HttpReply | typeof Streaming> => {
    const caller = await callerOf(options, req)
    if ("refused" in caller) return caller.refused
    const { principal } = caller
    // a stream's headers are sent before its task writes: only plain answers name their writes
    const calls = requestCalls(req)
    const inVersion = inVersionOf(options, req)
    // 1.0's JSON-RPC binding is JSON (spec 9.1): a body declared as another type is not read; 0.3 reads it as before
    if (versionOf(req.headers[VERSION_HEADER]) === "1.0" && !isJsonContentType(req.headers["content-type"])) {
      return { status: 200, json: inVersion(failure(null, { code: A2A_CONTENT_TYPE_NOT_SUPPORTED, message: `Content type not supported: a JSON-RPC request is application/json, not ${req.headers["content-type"]}` })) }
    }
    let body: unknown
    try {
      body = parseJsonBody(await req.body())
    } catch (error) {
      if (error instanceof PayloadTooLarge) return Streaming
      // JSON nested past the bound is a request refused as a request (with its HTTP meaning), not unreadable JSON
      if (error instanceof MalformedJson && error.reason === "json_too_deep") {
        return { status: 200, json: inVersion(failure(null, { code: JSONRPC_INVALID_REQUEST, message: `Invalid Request: ${error.message}`, data: { status: 400, code: "bad_request", reason: error.reason } })) }
      }
      return { status: 200, json: inVersion(failure(null, { code: JSONRPC_PARSE_ERROR, message: "Parse error" })) }
    }
    if (Array.isArray(body)) {
      if (body.length === 0) return { status: 200, json: inVersion(failure(null, { code: JSONRPC_INVALID_REQUEST, message: "Invalid Request: an empty batch" })) }
      const seen = new Set<unknown>()
      const answers: Array<object> = []
      for (const entry of body) {
        // only an id a response can carry (a string or a finite number) is one a repetition is told by;
        // an id of a wrong type is answered by dispatch, with id null
        const id = isObject(entry) ? entry.id : undefined
        const answerable = typeof id === "string" || (typeof id === "number" && Number.isFinite(id))
        if (answerable && seen.has(id)) {
          answers.push(inVersion(failure(id, { code: JSONRPC_INVALID_REQUEST, message: "Invalid Request: this id is used earlier in the batch" })))
          continue
        }
        if (answerable) seen.add(id)
        const answered = await dispatch(principal, calls, entry, true)
        if (answered !== undefined) answers.push(inVersion(answered))
      }
      return withPositions(answers.length === 0 ? { status: 204 } : { status: 200, json: answers }, calls.written)
    }
    const envelope = envelopeOf(body)
    const version = versionOf(req.headers[VERSION_HEADER])
    // a version not served opens no stream: dispatch answers its refusal
    const served = version === undefined || "error" in envelope ? undefined : methodIn(version, envelope.method)
    if (served?.streams === true && !("error" in envelope) && (envelope.params === undefined || isObject(envelope.params))) {
      return stream(principal, calls, res, envelope.id, served, envelope.params)
    }
    const answered = await dispatch(principal, calls, body, false)
    const retryAfter = retryAfterOf(answered)
    return withPositions(answered === undefined ? { status: 204 } : { status: 200, json: inVersion(answered), ...(retryAfter === undefined ? {} : { headers: retryAfter }) }, calls.written)
  }
  route(app, "post", "/a2a", handler, options.limits)
  // the same endpoint with a trailing slash: a client that joins "/" to the card's URL (the 1.0 TCK's) posts there
  route(app, "post", "/a2a/", handler, options.limits)
}
