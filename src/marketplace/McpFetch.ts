/**
 * The fetch the MCP SDK's client and auth functions are given for a plugin's servers: each request
 * passes the outbound address guard (`Outbound.check`) and connects to the addresses it checked,
 * like `Outbound.request`, but the answer streams (a Streamable HTTP reply or an SSE stream stays
 * open while the server talks). Redirects are not followed.
 */
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Effect, Either } from "effect"
import * as http from "node:http"
import * as https from "node:https"
import { Readable } from "node:stream"
import { check, OutboundPolicy, type OutboundPolicyService, pinnedLookup } from "../Outbound.ts"

/** Bodies the SDK sends: JSON text, or a form (token and registration requests). */
const bodyText = (body: RequestInit["body"]): string | undefined => {
  if (body === undefined || body === null) return undefined
  if (typeof body === "string") return body
  if (body instanceof URLSearchParams) return body.toString()
  throw new Error("a plugin request body must be text or a form")
}

const headersOf = (message: http.IncomingMessage): Headers => {
  const headers = new Headers()
  for (let i = 0; i + 1 < message.rawHeaders.length; i += 2) headers.append(message.rawHeaders[i], message.rawHeaders[i + 1])
  return headers
}

/** A fetch through the node's outbound policy. A refused address fails the request with the guard's message. */
export const outboundFetch = (policy: OutboundPolicyService): FetchLike => async (input, init = {}) => {
  const url = input instanceof URL ? input.href : input
  const checked = await Effect.runPromise(Effect.either(Effect.provideService(check(url), OutboundPolicy, policy)))
  if (Either.isLeft(checked)) throw new Error(checked.left.message)
  const target = checked.right
  const headers = new Headers(init.headers)
  const body = bodyText(init.body)
  if (body !== undefined) headers.set("content-length", String(Buffer.byteLength(body)))
  const client = target.url.protocol === "https:" ? https : http
  return new Promise<Response>((resolve, reject) => {
    const outgoing = client.request(
      target.url,
      { method: init.method ?? "GET", headers: Object.fromEntries(headers), lookup: pinnedLookup(target.addresses), agent: false, signal: init.signal ?? undefined },
      (incoming) => {
        const status = incoming.statusCode ?? 0
        const noBody = status === 204 || status === 304 || init.method === "HEAD"
        if (noBody) incoming.resume()
        resolve(new Response(noBody ? null : (Readable.toWeb(incoming) as ReadableStream), { status, statusText: incoming.statusMessage, headers: headersOf(incoming) }))
      }
    )
    outgoing.on("error", reject)
    outgoing.end(body)
  })
}

/** The fetch of this node's policy. */
export const nodeOutboundFetch = Effect.map(OutboundPolicy, outboundFetch)
