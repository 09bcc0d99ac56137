/**
 * Routing over a uWS app. A uWS request object dies when its callback returns, so each route copies
 * what a handler needs into a plain HttpRequest, buffers the body under a size limit, and writes the
 * handler's reply in one cork, never touching a response whose client went away.
 */
import { randomUUID } from "node:crypto"
import { STATUS_CODES } from "node:http"
import { Effect, LogLevel } from "effect"
import type uWS from "uWebSockets.js"
import { BadRequest } from "../src/platform/Errors.ts"
import { textNestsTooDeep, tooDeepMessage } from "../src/platform/JsonDepth.ts"
import { errorFields, type LoggedError, type NodeLog } from "../src/platform/Logging.ts"
import { errorBody } from "../src/platform/Failures.ts"
import { type Cors, OriginRefused, type ResponseHeaders } from "./cors.ts"
import type { HttpMetrics } from "./metrics.ts"
import { type Readiness, SERVED_WHILE_DRAINING } from "./readiness.ts"

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024

export type Method = "get" | "post" | "del" | "put" | "any"

export interface HttpRequest {
  /** Upper case, e.g. `POST`. */
  readonly method: string
  /** The path, without the query string. */
  readonly url: string
  /** The raw query string without `?`; empty when absent. */
  readonly query: string
  /** Values of the pattern's `:name` segments, in order. */
  readonly params: ReadonlyArray<string>
  /** Lower-case names; a repeated header's values are joined with ", ". */
  readonly headers: Readonly<Record<string, string>>
  /** The whole body. Rejects with PayloadTooLarge (the 413 has already been sent) or RequestAborted. */
  body(): Promise<Buffer>
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal
  /**
   * The route the request is counted under in the metrics: the pattern it matched, unless its
   * handler names the narrower route it dispatched to (a capability's). Never the URL itself.
   */
  route: string
  /** The peer's address on the socket (a proxy's, behind one); null once the client has gone. */
  readonly remoteAddress: string | null
  /** The client's `X-Request-Id` when it is a plain token, else a new one; answered as `X-Request-Id`, and on the request's log line. */
  readonly requestId: string
  /** The capability the request invoked and its invocation, once the checkpoint knows them (for the log line). */
  capability: string | undefined
  invocationId: string | undefined
  /**
   * What failed on the server's side, told by a handler that states failures in its own protocol
   * (JSON-RPC answers 200): on the request's log line. A plain reply carries its own (HttpReply).
   */
  failure: LoggedError | undefined
}

export interface HttpReply {
  readonly status: number
  /** Lower-case names. A `content-type` here replaces the default. */
  readonly headers?: Record<string, string>
  readonly json?: unknown
  readonly text?: string
  /** A binary body (a static file), sent as is with the reply's `content-type`. */
  readonly body?: Buffer
  /** What went wrong on the server's side (a 5xx): on the request's log line, never in the answer. */
  readonly failure?: LoggedError
}

/** Returned by a handler that took the response over (an SSE stream): the route writes nothing. */
export const Streaming: unique symbol = Symbol("gateway.Streaming")
export type Streaming = typeof Streaming

export type Handler = (req: HttpRequest, res: uWS.HttpResponse) => Promise<HttpReply | Streaming>

export interface RouteOptions {
  readonly maxBodyBytes?: number
}

/** A body that is not JSON, or JSON nested deeper than MAX_JSON_DEPTH: 400 `bad_request` with `reason`. */
export class MalformedJson extends Error {
  readonly _tag = "MalformedJson"
  constructor(message: string, readonly reason: "invalid_json" | "json_too_deep" = "invalid_json", options?: ErrorOptions) {
    super(message, options)
  }
}

export class PayloadTooLarge extends Error {
  readonly _tag = "PayloadTooLarge"
}

export class RequestAborted extends Error {
  readonly _tag = "RequestAborted"
}

export const jsonError = (status: number, code: string, message: string, reason?: string): HttpReply => ({
  status,
  json: errorBody({ code, reason, message })
})

/**
 * The one parse of a JSON request body (REST, JSON-RPC, the device routes; MCP's transport parses its
 * own after the same depth scan): its nesting is bounded before any recursive code sees it.
 */
export const parseJsonBody = (body: Buffer): unknown => {
  if (body.length === 0) throw new MalformedJson("Request body is empty")
  if (textNestsTooDeep(body)) throw new MalformedJson(`Request body is refused: ${tooDeepMessage}`, "json_too_deep")
  try {
    return JSON.parse(body.toString("utf8"))
  } catch (cause) {
    throw new MalformedJson("Request body is not valid JSON", "invalid_json", { cause })
  }
}

export const readJson = async (req: HttpRequest): Promise<unknown> => parseJsonBody(await req.body())

const JSON_TYPE = "application/json"
const TEXT_TYPE = "text/plain; charset=utf-8"
const OCTET_TYPE = "application/octet-stream"
const INTERNAL_BODY = JSON.stringify(jsonError(500, "internal", "Internal error").json)
const EMPTY = Buffer.alloc(0)
const NO_PARAMS: ReadonlyArray<string> = Object.freeze([])
// Property under which route() leaves its exchange on the uWS response, for takeOver().
const EXCHANGE = "gatewayExchange"

// uWS writes the status line verbatim, so it needs the reason phrase too: each known one written once.
const statusLines: ReadonlyMap<number, string> = new Map(
  Object.entries(STATUS_CODES).map(([status, reason]) => [Number(status), `${status} ${reason ?? "Unknown"}`])
)
const statusLine = (status: number): string => statusLines.get(status) ?? `${status} Unknown`

const REQUEST_ID_HEADER = "x-request-id"
// what a proxy or client may pass on as a request id: a plain token, nothing to escape in a header or a log
const SENT_REQUEST_ID = /^[A-Za-z0-9._:/+=-]{1,128}$/

const requestIdOf = (headers: Readonly<Record<string, string>>): string => {
  const sent = headers[REQUEST_ID_HEADER]
  return sent !== undefined && SENT_REQUEST_ID.test(sent) ? sent : randomUUID()
}

/**
 * Must run inside res.cork (or synchronously inside the uWS callback). `routeHeaders` are those
 * every response to the request carries (CORS), `headers` the reply's own. Returns the body's bytes.
 */
const writeResponse = (
  res: uWS.HttpResponse,
  status: number,
  requestId: string | undefined,
  routeHeaders: ResponseHeaders | undefined,
  headers: Record<string, string> | undefined,
  contentType: string,
  body: string | Buffer,
  closeConnection: boolean
): number => {
  res.writeStatus(statusLine(status))
  if (requestId !== undefined) res.writeHeader(REQUEST_ID_HEADER, requestId)
  if (routeHeaders !== undefined) for (const name in routeHeaders) res.writeHeader(name, routeHeaders[name])
  if (headers !== undefined) for (const name in headers) res.writeHeader(name, headers[name])
  if (status === 204 || status === 304) {
    // No body, no content-length. Called without arguments: this uWS build silently ignores
    // endWithoutBody(undefined, false) and leaves the response hanging.
    res.endWithoutBody()
    return 0
  }
  if (headers === undefined || headers["content-type"] === undefined) res.writeHeader("content-type", contentType)
  res.end(body, closeConnection)
  return Buffer.byteLength(body)
}

/**
 * A 413 answered on the declared length leaves the connection open, and uWS reads and discards the
 * rest of the body, as Node's and nginx's servers do: a connection closed while the client is still
 * writing is reset, and a busy client can see the broken pipe before it reads the 413. A body
 * declared beyond this much more than the limit is not worth reading, and its connection closes.
 */
const DRAINED_BODY_MAX = 64 * 1024 * 1024

const writeTooLarge = (res: uWS.HttpResponse, requestId: string, routeHeaders: ResponseHeaders | undefined, limit: number, closeConnection: boolean): number => {
  const body = JSON.stringify(jsonError(413, "payload_too_large", `Request body exceeds ${limit} bytes`).json)
  return writeResponse(res, 413, requestId, routeHeaders, undefined, JSON_TYPE, body, closeConnection)
}

/** A draining node's refusal; the connection closes, so that the client's next request goes elsewhere. */
const writeDraining = (res: uWS.HttpResponse, requestId: string, routeHeaders: ResponseHeaders | undefined): number => {
  const reply = jsonError(503, "unavailable", "this node is stopping; retry, and another node will answer", "draining")
  return writeResponse(res, 503, requestId, routeHeaders, { "retry-after": "1" }, JSON_TYPE, JSON.stringify(reply.json), true)
}

const writeCrossSiteRefused = (res: uWS.HttpResponse, requestId: string): number => {
  const reply = jsonError(403, "forbidden", "a page of another site may not make this request; use the app at this address, or a key from a server", "cross_site_request")
  return writeResponse(res, 403, requestId, undefined, undefined, JSON_TYPE, JSON.stringify(reply.json), true)
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"])

/**
 * Cross-site request forgery: a write on a route without a CORS policy (the cookie-authenticated
 * ones) sent by a page of another site. The browser says so in `Sec-Fetch-Site`, or in an `Origin`
 * whose host is not the one the request was sent to; callers that are not browsers send neither.
 * The SameSite=Lax cookie already stays home on such a request; this refuses it even when it is
 * authenticated some other way a browser attaches by itself.
 */
const crossSite = (method: string, headers: Readonly<Record<string, string>>): boolean => {
  if (SAFE_METHODS.has(method)) return false
  if (headers["sec-fetch-site"] === "cross-site") return true
  const origin = headers.origin
  if (origin === undefined) return false
  try {
    return new URL(origin).host !== headers.host
  } catch {
    return true
  }
}

// Closes the connection for the same reason: the refused request's body is not worth reading.
const writeOriginRefused = (res: uWS.HttpResponse, requestId: string | undefined, origin: string): number => {
  const reply = jsonError(
    403,
    "forbidden",
    `origin '${origin}' may not call this route cross-origin; the operator lists allowed origins in CORS_ORIGINS`,
    "origin_not_allowed"
  )
  return writeResponse(res, 403, requestId, undefined, undefined, JSON_TYPE, JSON.stringify(reply.json), true)
}

/** Who hears of an app's requests: its metrics count them, its log writes a line for each. */
export interface RequestObservers {
  readonly metrics?: HttpMetrics
  readonly log?: NodeLog
}

interface RequestLine {
  readonly requestId: string
  readonly method: string
  readonly route: string
  readonly status: number
  /** performance.now() on arrival. */
  readonly started: number
  /** Of the answer's body; unknown when a handler wrote it itself. */
  readonly bytes: number | undefined
  readonly capability?: string | undefined
  readonly invocationId?: string | undefined
  /** How a stream ended: its line is written then, its duration the stream's life. */
  readonly stream?: "ended" | "aborted"
  readonly failure?: LoggedError | undefined
}

/**
 * One line per request: at `error` for a 5xx that failed, at `warn` for a 503 that says nothing
 * failed (a node shedding load: it refused at once, and says when to retry), else `info`. The
 * route is the pattern, never the URL.
 */
const writeRequestLine = (log: NodeLog, line: RequestLine): void => {
  const shed = line.status === 503 && line.failure === undefined
  const failed = line.status >= 500 && !shed
  const level = failed ? LogLevel.Error : shed ? LogLevel.Warning : LogLevel.Info
  if (LogLevel.lessThan(level, log.level)) return
  const fields = {
    requestId: line.requestId,
    method: line.method,
    route: line.route,
    status: line.status,
    durationMs: Math.round((performance.now() - line.started) * 100) / 100,
    bytes: line.bytes,
    capability: line.capability,
    invocationId: line.invocationId,
    stream: line.stream,
    error: line.failure
  }
  log.write(level, "request", fields)
}

/** Counts and logs a request route() answered before making its exchange. */
const answeredEarly = (observers: RequestObservers | undefined, requestId: string, method: string, route: string, status: number, started: number, bytes: number): void => {
  observers?.metrics?.request(method, route, status, started)
  if (observers?.log !== undefined) writeRequestLine(observers.log, { requestId, method, route, status, started, bytes })
}

const readHeaders = (req: uWS.HttpRequest): Record<string, string> => {
  // A prototype-less object: header names such as `constructor` must not read inherited values.
  const headers: Record<string, string> = Object.create(null)
  req.forEach((name, value) => {
    const previous = headers[name]
    headers[name] = previous === undefined ? value : `${previous}, ${value}`
  })
  return headers
}

/** The status logged for a request whose client went away before any answer (nginx's). */
const CLIENT_CLOSED = 499

/** One request and its response, as route() tracks them. */
class Exchange implements HttpRequest {
  aborted = false
  /** A reply was written, or the response was taken over: the route writes nothing more. */
  committed = false
  capability: string | undefined = undefined
  invocationId: string | undefined = undefined
  failure: LoggedError | undefined = undefined
  #logged = false
  #onAbort: (() => void) | undefined = undefined
  #controller: AbortController | undefined = undefined
  #chunks: Array<Buffer> = []
  #size = 0
  /** Undefined while the body is still arriving. */
  #body: Buffer | PayloadTooLarge | RequestAborted | undefined
  #bodyPromise: Promise<Buffer> | undefined = undefined
  #resolve: ((body: Buffer) => void) | undefined = undefined
  #reject: ((error: Error) => void) | undefined = undefined

  constructor(
    readonly method: string,
    readonly url: string,
    readonly query: string,
    readonly params: ReadonlyArray<string>,
    readonly headers: Readonly<Record<string, string>>,
    readonly res: uWS.HttpResponse,
    readonly maxBodyBytes: number,
    /** Carried by every response to this request, a taken-over one included. */
    readonly routeHeaders: ResponseHeaders | undefined,
    hasBody: boolean,
    public route: string,
    readonly observers: RequestObservers | undefined,
    /** performance.now() on arrival. */
    readonly started: number,
    readonly requestId: string,
    readonly readiness: Readiness | undefined
  ) {
    this.#body = hasBody ? undefined : EMPTY
  }

  /** Counts the request once its status is written, and logs it unless it is a stream (logged as it closes). */
  #answered(status: number, bytes: number | undefined, failure?: LoggedError): void {
    this.observers?.metrics?.request(this.method, this.route, status, this.started)
    this.logLine(status, bytes, undefined, failure)
  }

  /** The request's one line; later calls write nothing. */
  logLine(status: number, bytes: number | undefined, stream?: "ended" | "aborted", failure?: LoggedError): void {
    const log = this.observers?.log
    if (log === undefined || this.#logged) return
    this.#logged = true
    const { requestId, method, route, started, capability, invocationId } = this
    writeRequestLine(log, { requestId, method, route, status, started, bytes, capability, invocationId, stream, failure: failure ?? this.failure })
  }

  // Read on first use, from the response (which outlives the uWS request): most handlers never look.
  get remoteAddress(): string | null {
    return this.aborted ? null : Buffer.from(this.res.getRemoteAddressAsText()).toString()
  }

  // Created on first use: most handlers never look at the signal.
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController()
      if (this.aborted) this.#controller.abort()
    }
    return this.#controller.signal
  }

  body(): Promise<Buffer> {
    if (this.#bodyPromise === undefined) {
      const body = this.#body
      this.#bodyPromise =
        body === undefined
          ? new Promise((resolve, reject) => {
              this.#resolve = resolve
              this.#reject = reject
            })
          : body instanceof Error
            ? Promise.reject(body)
            : Promise.resolve(body)
    }
    return this.#bodyPromise
  }

  /** uWS onData: the chunk's memory is reused after this call returns, hence the copy. */
  receive(chunk: ArrayBuffer, isLast: boolean): void {
    if (this.#body !== undefined) return
    const size = chunk.byteLength
    if (size > 0) {
      if (this.#size + size > this.maxBodyBytes) {
        this.#settleBody(new PayloadTooLarge(`Request body exceeds ${this.maxBodyBytes} bytes`))
        if (!this.aborted && !this.committed) {
          this.committed = true
          let bytes = 0
          this.res.cork(() => {
            // the length was not declared: the rest could be endless, so the connection closes
            bytes = writeTooLarge(this.res, this.requestId, this.routeHeaders, this.maxBodyBytes, true)
          })
          this.#answered(413, bytes)
        }
        return
      }
      this.#chunks.push(Buffer.from(new Uint8Array(chunk)))
      this.#size += size
    }
    if (isLast) {
      const chunks = this.#chunks
      this.#settleBody(chunks.length === 0 ? EMPTY : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, this.#size))
    }
  }

  #settleBody(body: Buffer | PayloadTooLarge | RequestAborted): void {
    this.#body = body
    this.#chunks.length = 0
    if (this.#resolve === undefined || this.#reject === undefined) return
    if (body instanceof Error) this.#reject(body)
    else this.#resolve(body)
  }

  /** uWS onAborted. */
  abort(): void {
    this.aborted = true
    this.#controller?.abort()
    if (this.#body === undefined) this.#settleBody(new RequestAborted("Client went away before sending the whole body"))
    if (!this.committed) this.logLine(CLIENT_CLOSED, 0)
    this.#onAbort?.()
  }

  /** `bytes`: of the answer the caller writes; undefined for a stream, whose line is written as it closes. */
  takeOver(onAbort: () => void, status: number, bytes: number | undefined, stream: boolean): boolean {
    if (this.aborted) return false
    this.committed = true
    this.#onAbort = onAbort
    if (stream) this.observers?.metrics?.request(this.method, this.route, status, this.started)
    else this.#answered(status, bytes)
    return true
  }

  send(status: number, headers: Record<string, string> | undefined, contentType: string, body: string | Buffer, failure?: LoggedError): void {
    if (this.aborted || this.committed) return
    this.committed = true
    let bytes = 0
    this.res.cork(() => {
      // a draining node closes the connections it answers on: a client's next request goes elsewhere
      bytes = writeResponse(this.res, status, this.requestId, this.routeHeaders, headers, contentType, body, this.readiness?.draining === true)
    })
    this.#answered(status, bytes, failure)
  }
}

const isOwnFailure = (cause: unknown): boolean => cause instanceof PayloadTooLarge || cause instanceof RequestAborted

const serve = async (ex: Exchange, handler: Handler): Promise<void> => {
  ex.readiness?.requestStarted()
  try {
    const reply = await handler(ex, ex.res)
    if (reply === Streaming) return
    // Serialised here, inside the try, so that a reply JSON.stringify rejects becomes a 500.
    if (reply.json !== undefined) ex.send(reply.status, reply.headers, JSON_TYPE, JSON.stringify(reply.json), reply.failure)
    else if (reply.body !== undefined) ex.send(reply.status, reply.headers, OCTET_TYPE, reply.body, reply.failure)
    else ex.send(reply.status, reply.headers, TEXT_TYPE, reply.text ?? "", reply.failure)
    return
  } catch (cause) {
    // A body failure was already answered (413) or has nobody to answer; anything else is a bug,
    // stated on the 500's line
    if (!isOwnFailure(cause)) ex.send(500, undefined, JSON_TYPE, INTERNAL_BODY, errorFields(cause))
  } finally {
    ex.readiness?.requestEnded()
  }
}

const countParams = (pattern: string): number => pattern.split("/").filter((segment) => segment.startsWith(":")).length

/** What serveCors(), observeRequests() and serveWhileReady() set on an app, for its routes: held by the app itself. */
interface AppRouting {
  cors?: Cors
  observers?: RequestObservers
  readiness?: Readiness
}

const routing: unique symbol = Symbol("gateway.routing")

const routingOf = (app: uWS.TemplatedApp): AppRouting => {
  const held = app as uWS.TemplatedApp & { [routing]?: AppRouting }
  return (held[routing] ??= {})
}

/** Makes route() count every request of `app` in the metrics and write a line for it in the log. Call it before any route(). */
export const observeRequests = (app: uWS.TemplatedApp, observers: RequestObservers): void => {
  routingOf(app).observers = observers
}

/**
 * Makes route() count the requests and streams of `app` in `readiness`, and refuse new ones while
 * it drains (but its liveness and readiness routes). Call it before any route().
 */
export const serveWhileReady = (app: uWS.TemplatedApp, readiness: Readiness): void => {
  routingOf(app).readiness = readiness
}

/**
 * Serves `cors` on `app`: answers preflights, and makes route() add the CORS headers to every
 * response (or refuse the origin) before the handler runs. Call it before any route().
 */
export const serveCors = (app: uWS.TemplatedApp, cors: Cors): void => {
  routingOf(app).cors = cors
  app.options("/*", (res, req) => {
    const origin = req.getHeader("origin")
    if (origin === "" || req.getHeader("access-control-request-method") === "") {
      // not a preflight: whatever route matches answers it
      req.setYield(true)
      return
    }
    const headers = cors.preflightHeaders(req.getUrl(), origin)
    if (headers === OriginRefused) writeOriginRefused(res, undefined, origin)
    else writeResponse(res, 204, undefined, headers, undefined, TEXT_TYPE, "", false)
  })
}

export const route = (
  app: uWS.TemplatedApp,
  method: Method,
  pattern: string,
  handler: Handler,
  options: RouteOptions = {}
): void => {
  const paramCount = countParams(pattern)
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const { cors, observers, readiness } = routingOf(app)
  const refusedWhileDraining = !SERVED_WHILE_DRAINING.has(pattern)
  app[method](pattern, (res, req) => {
    const started = performance.now()
    const headers = readHeaders(req)
    const requestId = requestIdOf(headers)
    const url = req.getUrl()
    const routeHeaders = cors?.responseHeaders(url, headers.origin, headers.host)
    if (routeHeaders === OriginRefused) {
      answeredEarly(observers, requestId, req.getMethod().toUpperCase(), pattern, 403, started, writeOriginRefused(res, requestId, headers.origin))
      return
    }
    if (routeHeaders === undefined && crossSite(req.getMethod().toUpperCase(), headers)) {
      answeredEarly(observers, requestId, req.getMethod().toUpperCase(), pattern, 403, started, writeCrossSiteRefused(res, requestId))
      return
    }
    if (readiness?.draining === true && refusedWhileDraining) {
      readiness.refused()
      answeredEarly(observers, requestId, req.getMethod().toUpperCase(), pattern, 503, started, writeDraining(res, requestId, routeHeaders))
      return
    }
    const declared = headers["content-length"]
    if (declared !== undefined && Number(declared) > limit) {
      answeredEarly(observers, requestId, req.getMethod().toUpperCase(), pattern, 413, started, writeTooLarge(res, requestId, routeHeaders, limit, Number(declared) - limit > DRAINED_BODY_MAX))
      return
    }
    let params = NO_PARAMS
    if (paramCount > 0) {
      const values = new Array<string>(paramCount)
      for (let i = 0; i < paramCount; i++) values[i] = req.getParameter(i)
      params = values
    }
    const hasBody = declared !== undefined ? Number(declared) > 0 : headers["transfer-encoding"] !== undefined
    const ex = new Exchange(
      req.getMethod().toUpperCase(),
      url,
      // undefined when there is no query, whatever the typings say
      req.getQuery() ?? "",
      params,
      headers,
      res,
      limit,
      routeHeaders,
      hasBody,
      pattern,
      observers,
      started,
      requestId,
      readiness
    )
    res[EXCHANGE] = ex
    res.onAborted(() => ex.abort())
    if (hasBody) res.onData((chunk, isLast) => ex.receive(chunk, isLast))
    void serve(ex, handler)
  })
}

/**
 * Takes a response over from route(): the route will write nothing to it, and `onAbort` runs when
 * the client goes away (uWS keeps one onAborted handler per response and route() owns it). Returns
 * false when the client is already gone. On a response route() does not manage, this attaches
 * onAborted itself, so call it synchronously inside the uWS callback. `status` and `bytes`: of the
 * answer the caller writes, as the request is counted and logged.
 */
export const takeOver = (res: uWS.HttpResponse, onAbort: () => void, status = 200, bytes?: number): boolean => {
  const ex: Exchange | undefined = res[EXCHANGE]
  if (ex === undefined) {
    res.onAborted(onAbort)
    return true
  }
  return ex.takeOver(onAbort, status, bytes, false)
}

/** Called once as a stream closes: how, the bytes it wrote, what failed in it. */
export type StreamClosed = (how: "ended" | "aborted", bytes: number, failure?: LoggedError) => void

const UNOBSERVED: StreamClosed = () => {}

/**
 * takeOver() for a stream answered 200: counts it open on the response's route; the returned
 * function counts it closed and writes the request's line, its duration the stream's life.
 * Undefined when the client is already gone.
 */
export const takeOverStream = (res: uWS.HttpResponse, onAbort: () => void): StreamClosed | undefined => {
  const ex: Exchange | undefined = res[EXCHANGE]
  if (ex === undefined) {
    res.onAborted(onAbort)
    return UNOBSERVED
  }
  if (!ex.takeOver(onAbort, 200, undefined, true)) return undefined
  const metrics = ex.observers?.metrics
  const route = ex.route
  metrics?.streamOpened(route)
  ex.readiness?.streamOpened()
  return (how, bytes, failure) => {
    metrics?.streamClosed(route)
    ex.readiness?.streamClosed()
    ex.logLine(200, bytes, how, failure)
  }
}

/** The headers route() adds to every response of this request (its id, CORS), for a handler writing its own. */
export const routeHeaders = (res: uWS.HttpResponse): ResponseHeaders | undefined => {
  const ex: Exchange | undefined = res[EXCHANGE]
  return ex === undefined ? undefined : { [REQUEST_ID_HEADER]: ex.requestId, ...ex.routeHeaders }
}

/** The body as JSON; a body over the limit has already been answered with 413. */
export const jsonBody = (req: HttpRequest) =>
  Effect.tryPromise({
    try: () => readJson(req),
    catch: (error) =>
      error instanceof MalformedJson
        ? new BadRequest({ reason: error.reason, message: error.message })
        : error instanceof PayloadTooLarge
          ? error
          : new BadRequest({ reason: "unreadable_body", message: "the request body could not be read" })
  })

