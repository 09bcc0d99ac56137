/**
 * Signed webhooks, per Standard Webhooks (https://www.standardwebhooks.com/): each delivery carries
 * `webhook-id` (the same on every retry of it, so a receiver can drop duplicates),
 * `webhook-timestamp` (seconds) and `webhook-signature`: `v1,` and the base64 HMAC-SHA256, keyed
 * with the secret's bytes (base64 after `whsec_`), of `<id>.<timestamp>.<body>`. Sent through the
 * outbound guard (src/platform/Outbound.ts).
 */
import { Clock, Effect, Schema } from "effect"
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import * as Outbound from "../platform/Outbound.ts"
import { textNestsTooDeep } from "../platform/JsonDepth.ts"

const SECRET_PREFIX = "whsec_"

/** A new signing secret: `whsec_` and 32 random bytes in base64 (the convention asks 24 to 64). */
export const newWebhookSecret = (): string => SECRET_PREFIX + randomBytes(32).toString("base64")

const secretKey = (secret: string): Buffer => Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64")

export interface SignedContent {
  readonly id: string
  /** Unix seconds. */
  readonly timestamp: number
  /** The body exactly as sent. */
  readonly body: string
  readonly secret: string
}

/** The `webhook-signature` value: `v1,<base64 HMAC-SHA256>`. */
export const signWebhook = ({ id, timestamp, body, secret }: SignedContent): string =>
  `v1,${createHmac("sha256", secretKey(secret)).update(`${id}.${timestamp}.${body}`).digest("base64")}`

/** How far a delivery's timestamp may be from the receiver's clock (the convention's five minutes). */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60

export type WebhookVerification =
  | { readonly valid: true; readonly id: string; readonly timestamp: number }
  | { readonly valid: false; readonly reason: "missing_headers" | "timestamp_out_of_tolerance" | "bad_signature" }

const header = (headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>, name: string): string | undefined => {
  const value = headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1]
  return typeof value === "string" ? value : value?.[0]
}

/**
 * A receiver's check of a delivery: its headers (Node's `IncomingHttpHeaders` will do), its raw
 * body, the shared secret and the receiver's clock (Unix seconds). Any one of the space-separated
 * `v1,` signatures may match (a sender rotating its secret signs with both).
 */
export const verifyWebhook = (input: {
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  readonly body: string
  readonly secret: string
  readonly nowSeconds: number
  readonly toleranceSeconds?: number
}): WebhookVerification => {
  const id = header(input.headers, "webhook-id")
  const timestampText = header(input.headers, "webhook-timestamp")
  const signatures = header(input.headers, "webhook-signature")
  if (id === undefined || timestampText === undefined || signatures === undefined || !/^\d+$/.test(timestampText)) {
    return { valid: false, reason: "missing_headers" }
  }
  const timestamp = Number(timestampText)
  if (Math.abs(input.nowSeconds - timestamp) > (input.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS)) return { valid: false, reason: "timestamp_out_of_tolerance" }
  const expected = Buffer.from(signWebhook({ id, timestamp, body: input.body, secret: input.secret }))
  const matches = signatures.split(" ").some((signature) => {
    const given = Buffer.from(signature)
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
  return matches ? { valid: true, id, timestamp } : { valid: false, reason: "bad_signature" }
}

/** A receiver's wait, when the caller names none: long enough for a slow handler, short for a step. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000
/** The longest answer read, when the caller names none: an acknowledgement, not a download. */
export const DEFAULT_WEBHOOK_MAX_RESPONSE_BYTES = 64 * 1024

/** The receiver answered, but not with 2xx (a redirect included: they are not followed). */
export class WebhookRejected extends Schema.TaggedError<WebhookRejected>()("WebhookRejected", {
  url: Schema.String,
  status: Schema.Int,
  /** The answer's body as text (at most the response limit). */
  body: Schema.String
}) {
  override get message() {
    return `'${this.url}' answered ${this.status}`
  }
}

export type WebhookError = Outbound.OutboundError | WebhookRejected

export interface WebhookDelivery {
  readonly url: string
  /** POST unless named. */
  readonly method?: string
  /** Further headers; the signature's and `content-type` are the sender's own and win; `refusedHeader`s are dropped. */
  readonly headers?: Readonly<Record<string, string>>
  /** Sent as JSON. */
  readonly body: unknown
  /** The delivery's id: the caller passes the same one on every retry of one delivery. */
  readonly webhookId: string
  readonly secret: string
  readonly timeoutMs?: number
  readonly maxResponseBytes?: number
}

export interface WebhookResponse {
  readonly status: number
  /** Parsed when the receiver says it is JSON and it is (nested within MAX_JSON_DEPTH); else the text. */
  readonly body: unknown
}

const isJson = (contentType: string | undefined): boolean => contentType !== undefined && /^application\/([\w.+-]+\+)?json\b/i.test(contentType.trim())

const readBody = (response: Outbound.OutboundResponse): unknown => {
  const text = response.body.toString("utf8")
  // kept as the run's output and read back with it: JSON nested past the bound stays text
  if (!isJson(response.headers["content-type"]) || textNestsTooDeep(response.body)) return text
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const signatureHeaders = new Set(["webhook-id", "webhook-timestamp", "webhook-signature", "content-type"])

/** Headers of the connection and the message's framing: the transport writes them, no caller. */
const transportHeaders = new Set(["host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer", "proxy-connection"])

/**
 * Why a caller may not set this header on a delivery, or undefined when it may: one that frames
 * the request or names the connection (a declared length that is not the body's desynchronizes
 * the receiver's reading of the stream), or one a proxy writes to say whom it forwards for
 * (`Forwarded`, `X-Forwarded-*`, `X-Real-IP`), which a receiver may trust.
 */
export const refusedHeader = (name: string): string | undefined => {
  const lower = name.trim().toLowerCase()
  if (transportHeaders.has(lower)) return `${name} is written by the transport`
  if (lower === "forwarded" || lower === "x-real-ip" || lower.startsWith("x-forwarded-")) return `${name} is a proxy's to write`
  return undefined
}

/** Signs and sends one attempt of a delivery, through the outbound guard; a 2xx answer is its success. */
export const sendWebhook = (delivery: WebhookDelivery): Effect.Effect<WebhookResponse, WebhookError, Outbound.OutboundPolicy> =>
  Effect.gen(function* () {
    const body = JSON.stringify(delivery.body) ?? "null"
    const timestamp = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    // a step saved before `refusedHeader` was checked at create and update still sends none of them
    const callerHeaders = Object.entries(delivery.headers ?? {}).filter(([name]) => !signatureHeaders.has(name.toLowerCase()) && refusedHeader(name) === undefined)
    const response = yield* Outbound.request({
      url: delivery.url,
      method: delivery.method ?? "POST",
      headers: {
        ...Object.fromEntries(callerHeaders),
        "content-type": "application/json",
        "webhook-id": delivery.webhookId,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signWebhook({ id: delivery.webhookId, timestamp, body, secret: delivery.secret })
      },
      body,
      timeoutMs: delivery.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
      maxResponseBytes: delivery.maxResponseBytes ?? DEFAULT_WEBHOOK_MAX_RESPONSE_BYTES
    })
    if (response.status < 200 || response.status > 299) {
      return yield* new WebhookRejected({ url: Outbound.shownUrl(delivery.url), status: response.status, body: response.body.toString("utf8") })
    }
    return { status: response.status, body: readBody(response) }
  })
