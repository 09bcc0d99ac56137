/**
 * The client of the registry API v0.1 (spec 4.6, 9.2): `GET /v0.1/servers` page by page and
 * `GET /v0.1/servers/{name}/versions/{version}`. Discovery is unauthenticated; every call goes
 * through the outbound guard (`Outbound.request`). A non-success answer fails the call with its
 * status; an answer that is not the documented shape fails too.
 */
import { Effect, Schema } from "effect"
import { type OutboundError, OutboundPolicy, request, shownUrl } from "../platform/Outbound.ts"
import { textNestsTooDeep, tooDeepMessage } from "../platform/JsonDepth.ts"

/** How long one registry call may take, and the largest answer read (a page of 100 is ~200 KB). */
const TIMEOUT_MS = 30_000
const MAX_ANSWER_BYTES = 16 * 1024 * 1024

/** The registry answered with a non-success status, or with something else than the API's shape. */
export class RegistryCallFailed extends Schema.TaggedError<RegistryCallFailed>()("RegistryCallFailed", {
  url: Schema.String,
  status: Schema.NullOr(Schema.Int),
  message: Schema.String
}) {}

export interface ServersPage {
  /** Each item as answered (`{ server, _meta }`); derivation decides what is a server version. */
  readonly servers: ReadonlyArray<unknown>
  readonly nextCursor: string | null
}

export interface ListQuery {
  readonly cursor?: string | null
  readonly limit: number
  readonly updatedSince?: string | null
  readonly includeDeleted?: boolean
  readonly search?: string
}

const base = (baseUrl: string) => baseUrl.replace(/\/+$/, "")

const getJson = (url: string): Effect.Effect<unknown, RegistryCallFailed | OutboundError, OutboundPolicy> =>
  request({ url, method: "GET", headers: { accept: "application/json" }, timeoutMs: TIMEOUT_MS, maxResponseBytes: MAX_ANSWER_BYTES }).pipe(
    Effect.flatMap((response) => {
      if (response.status < 200 || response.status > 299) {
        return Effect.fail(new RegistryCallFailed({ url: shownUrl(url), status: response.status, message: `the registry answered ${response.status}` }))
      }
      // what a registry says is stored in the catalog and read back by every listing: bounded as request bodies are
      if (textNestsTooDeep(response.body)) {
        return Effect.fail(new RegistryCallFailed({ url: shownUrl(url), status: response.status, message: `the registry's answer is refused: ${tooDeepMessage}` }))
      }
      return Effect.try({
        try: () => JSON.parse(response.body.toString("utf8")) as unknown,
        catch: () => new RegistryCallFailed({ url: shownUrl(url), status: response.status, message: "the registry's answer is not JSON" })
      })
    })
  )

const isObj = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

export const listServers = (baseUrl: string, query: ListQuery) => {
  const url = new URL(`${base(baseUrl)}/v0.1/servers`)
  url.searchParams.set("limit", String(query.limit))
  if (query.cursor) url.searchParams.set("cursor", query.cursor)
  if (query.updatedSince) url.searchParams.set("updated_since", query.updatedSince)
  if (query.includeDeleted) url.searchParams.set("include_deleted", "true")
  if (query.search) url.searchParams.set("search", query.search)
  return Effect.flatMap(getJson(url.toString()), (body): Effect.Effect<ServersPage, RegistryCallFailed> => {
    if (!isObj(body) || !Array.isArray(body.servers)) {
      return Effect.fail(new RegistryCallFailed({ url: shownUrl(url.toString()), status: 200, message: "the registry's answer has no servers array" }))
    }
    const metadata = isObj(body.metadata) ? body.metadata : {}
    const next = typeof metadata.nextCursor === "string" && metadata.nextCursor !== "" ? metadata.nextCursor : null
    return Effect.succeed({ servers: body.servers, nextCursor: next })
  })
}

/** One version (`latest` allowed) of a server. */
export const getServer = (baseUrl: string, name: string, version: string) =>
  getJson(`${base(baseUrl)}/v0.1/servers/${encodeURIComponent(name)}/versions/${encodeURIComponent(version)}`)

/** Why a call failed, as a sync records it. */
export const failureReason = (error: RegistryCallFailed | OutboundError): string => {
  switch (error._tag) {
    case "RegistryCallFailed":
      return error.status !== null && (error.status < 200 || error.status > 299) ? `http_${error.status}: ${error.message}` : `invalid_answer: ${error.message}`
    case "OutboundRefused":
      return `outbound_refused: ${error.reason}`
    case "OutboundTimeout":
      return "timeout"
    case "OutboundResponseTooLarge":
      return "answer_too_large"
    case "OutboundConnectionFailed":
      return `connection_failed${error.code ? `: ${error.code}` : ""}`
  }
}
