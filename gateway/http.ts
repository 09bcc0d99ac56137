/**
 * Routing over a uWS app. A uWS request object dies when its callback returns, so each route copies
 * what a handler needs into a plain HttpRequest, buffers the body under a size limit, and writes the
 * handler's reply in one cork, never touching a response whose client went away.
 */
import { STATUS_CODES } from "node:http"
import { Effect } from "effect"
import type uWS from "uWebSockets.js"
import { BadRequest } from "../src/Errors.ts"
import { type Cors, OriginRefused, type ResponseHeaders } from "./cors.ts"
import type { HttpMetrics } from "./metrics.ts"

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
}

export interface HttpReply {
  readonly status: number
  /** Lower-case names. A `content-type` here replaces the default. */
  readonly headers?: Record<string, string>
  readonly json?: unknown
  readonly text?: string
}

/** Returned by a handler that took the response over (an SSE stream): the route writes nothing. */
export const Streaming: unique symbol = Symbol("gateway.Streaming")
export type Streaming = typeof Streaming

export type Handler = (req: HttpRequest, res: uWS.HttpResponse) => Promise<HttpReply | Streaming>

export interface RouteOptions {
  readonly maxBodyBytes?: number
}

export class MalformedJson extends Error {
  readonly _tag = "MalformedJson"
}

export class PayloadTooLarge extends Error {
  readonly _tag = "PayloadTooLarge"
}

export class RequestAborted extends Error {
  readonly _tag = "RequestAborted"
}

export const jsonError = (status: number, code: string, message: string, reason?: string): HttpReply => ({
  status,
  json: { error: reason === undefined ? { code, message } : { code, reason, message } }
})

export const readJson = async (req: HttpRequest): Promise<unknown> => {
  const body = await req.body()
  if (body.length === 0) throw new MalformedJson("Request body is empty")
  try {
    return JSON.parse(body.toString("utf8"))
  } catch (cause) {
    throw new MalformedJson("Request body is not valid JSON", { cause })
  }
}

const JSON_TYPE = "application/json"
const TEXT_TYPE = "text/plain; charset=utf-8"
const INTERNAL_BODY = JSON.stringify(jsonError(500, "internal", "Internal error").json)
const EMPTY = Buffer.alloc(0)
const NO_PARAMS: ReadonlyArray<string> = Object.freeze([])
// Property under which route() leaves its exchange on the uWS response, for takeOver().
const EXCHANGE = "gatewayExchange"

const statusLines = new Map<number, string>()
// uWS writes the status line verbatim, so it needs the reason phrase too.
const statusLine = (status: number): string => {
  let line = statusLines.get(status)
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? "Unknown"}`
    statusLines.set(status, line)
  }
  return line
}

/**
 * Must run inside res.cork (or synchronously inside the uWS callback). `routeHeaders` are those
 * every response to the request carries (CORS), `headers` the reply's own.
 */
const writeResponse = (
  res: uWS.HttpResponse,
  status: number,
  routeHeaders: ResponseHeaders | undefined,
  headers: Record<string, string> | undefined,
  contentType: string,
  body: string,
  closeConnection: boolean
): void => {
  res.writeStatus(statusLine(status))
  if (routeHeaders !== undefined) for (const name in routeHeaders) res.writeHeader(name, routeHeaders[name])
  if (headers !== undefined) for (const name in headers) res.writeHeader(name, headers[name])
  if (status === 204 || status === 304) {
    // No body, no content-length. Called without arguments: this uWS build silently ignores
    // endWithoutBody(undefined, false) and leaves the response hanging.
    res.endWithoutBody()
    return
  }
  if (headers === undefined || headers["content-type"] === undefined) res.writeHeader("content-type", contentType)
  res.end(body, closeConnection)
}

// The 413 closes the connection: reading (and discarding) the rest of an oversized body is wasted work.
const writeTooLarge = (res: uWS.HttpResponse, routeHeaders: ResponseHeaders | undefined, limit: number): void => {
  const body = JSON.stringify(jsonError(413, "payload_too_large", `Request body exceeds ${limit} bytes`).json)
  writeResponse(res, 413, routeHeaders, undefined, JSON_TYPE, body, true)
}

// Closes the connection for the same reason: the refused request's body is not worth reading.
const writeOriginRefused = (res: uWS.HttpResponse, origin: string): void => {
  const reply = jsonError(
    403,
    "forbidden",
    `origin '${origin}' may not call this route cross-origin; the operator lists allowed origins in CORS_ORIGINS`,
    "origin_not_allowed"
  )
  writeResponse(res, 403, undefined, undefined, JSON_TYPE, JSON.stringify(reply.json), true)
}

// req.forEach runs synchronously, so one shared collector serves every request without a closure each.
let headerSink: Record<string, string> = Object.create(null)
const collectHeader = (name: string, value: string): void => {
  const previous = headerSink[name]
  headerSink[name] = previous === undefined ? value : `${previous}, ${value}`
}
const readHeaders = (req: uWS.HttpRequest): Record<string, string> => {
  // A prototype-less object: header names such as `constructor` must not read inherited values.
  const headers: Record<string, string> = Object.create(null)
  headerSink = headers
  req.forEach(collectHeader)
  return headers
}

/** One request and its response, as route() tracks them. */
class Exchange implements HttpRequest {
  aborted = false
  /** A reply was written, or the response was taken over: the route writes nothing more. */
  committed = false
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
    readonly metrics: HttpMetrics | undefined,
    /** performance.now() on arrival. */
    readonly started: number
  ) {
    this.#body = hasBody ? undefined : EMPTY
  }

  /** Counts the request once its status is written. */
  #answered(status: number): void {
    this.metrics?.request(this.method, this.route, status, this.started)
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
          this.res.cork(() => writeTooLarge(this.res, this.routeHeaders, this.maxBodyBytes))
          this.#answered(413)
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
    this.#onAbort?.()
  }

  takeOver(onAbort: () => void, status: number): boolean {
    if (this.aborted) return false
    this.committed = true
    this.#onAbort = onAbort
    this.#answered(status)
    return true
  }

  send(status: number, headers: Record<string, string> | undefined, contentType: string, body: string): void {
    if (this.aborted || this.committed) return
    this.committed = true
    this.res.cork(() => writeResponse(this.res, status, this.routeHeaders, headers, contentType, body, false))
    this.#answered(status)
  }
}

const isOwnFailure = (cause: unknown): boolean => cause instanceof PayloadTooLarge || cause instanceof RequestAborted

const serve = async (ex: Exchange, handler: Handler): Promise<void> => {
  try {
    const reply = await handler(ex, ex.res)
    if (reply === Streaming) return
    // Serialised here, inside the try, so that a reply JSON.stringify rejects becomes a 500.
    if (reply.json !== undefined) ex.send(reply.status, reply.headers, JSON_TYPE, JSON.stringify(reply.json))
    else ex.send(reply.status, reply.headers, TEXT_TYPE, reply.text ?? "")
    return
  } catch (cause) {
    // A body failure was already answered (413) or has nobody to answer; anything else is a bug.
    if (!isOwnFailure(cause)) console.error(`gateway: ${ex.method} ${ex.url} failed`, cause)
  }
  ex.send(500, undefined, JSON_TYPE, INTERNAL_BODY)
}

const countParams = (pattern: string): number => pattern.split("/").filter((segment) => segment.startsWith(":")).length

const corsOfApp = new WeakMap<uWS.TemplatedApp, Cors>()
const metricsOfApp = new WeakMap<uWS.TemplatedApp, HttpMetrics>()

/** Makes route() count every request of `app` in `metrics`. Call it before any route(). */
export const observeRequests = (app: uWS.TemplatedApp, metrics: HttpMetrics): void => {
  metricsOfApp.set(app, metrics)
}

/**
 * Serves `cors` on `app`: answers preflights, and makes route() add the CORS headers to every
 * response (or refuse the origin) before the handler runs. Call it before any route().
 */
export const serveCors = (app: uWS.TemplatedApp, cors: Cors): void => {
  corsOfApp.set(app, cors)
  app.options("/*", (res, req) => {
    const origin = req.getHeader("origin")
    if (origin === "" || req.getHeader("access-control-request-method") === "") {
      // not a preflight: whatever route matches answers it
      req.setYield(true)
      return
    }
    const headers = cors.preflightHeaders(req.getUrl(), origin)
    if (headers === OriginRefused) writeOriginRefused(res, origin)
    else writeResponse(res, 204, headers, undefined, TEXT_TYPE, "", false)
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
  const cors = corsOfApp.get(app)
  const metrics = metricsOfApp.get(app)
  app[method](pattern, (res, req) => {
    const started = performance.now()
    const headers = readHeaders(req)
    const url = req.getUrl()
    const routeHeaders = cors?.responseHeaders(url, headers.origin)
    if (routeHeaders === OriginRefused) {
      writeOriginRefused(res, headers.origin)
      metrics?.request(req.getMethod().toUpperCase(), pattern, 403, started)
      return
    }
    const declared = headers["content-length"]
    if (declared !== undefined && Number(declared) > limit) {
      writeTooLarge(res, routeHeaders, limit)
      metrics?.request(req.getMethod().toUpperCase(), pattern, 413, started)
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
      metrics,
      started
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
 * onAborted itself, so call it synchronously inside the uWS callback. `status`: the one the caller
 * writes, as the request is counted.
 */
export const takeOver = (res: uWS.HttpResponse, onAbort: () => void, status = 200): boolean => {
  const ex: Exchange | undefined = res[EXCHANGE]
  if (ex === undefined) {
    res.onAborted(onAbort)
    return true
  }
  return ex.takeOver(onAbort, status)
}

const NOT_COUNTED = (): void => {}

/** Counts a stream open on the response's route; the returned function counts it closed (call it once). */
export const countStream = (res: uWS.HttpResponse): (() => void) => {
  const ex: Exchange | undefined = res[EXCHANGE]
  const metrics = ex?.metrics
  if (ex === undefined || metrics === undefined) return NOT_COUNTED
  const route = ex.route
  metrics.streamOpened(route)
  return () => metrics.streamClosed(route)
}

/** The headers route() adds to every response of this request (CORS), for a handler writing its own. */
export const routeHeaders = (res: uWS.HttpResponse): ResponseHeaders | undefined => (res[EXCHANGE] as Exchange | undefined)?.routeHeaders

/** The body as JSON; a body over the limit has already been answered with 413. */
export const jsonBody = (req: HttpRequest) =>
  Effect.tryPromise({
    try: () => readJson(req),
    catch: (error) =>
      error instanceof MalformedJson
        ? new BadRequest({ reason: "invalid_json", message: error.message })
        : error instanceof PayloadTooLarge
          ? error
          : new BadRequest({ reason: "unreadable_body", message: "the request body could not be read" })
  })

