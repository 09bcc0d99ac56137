/**
 * The CLI device login's two unauthenticated routes (RFC 8628; src/identity/DeviceLogin.ts). Approval and
 * denial are capabilities (`auth.device.approve`, `auth.device.deny`) on the registry's routes.
 *
 * - `POST /v1/auth/device/code`, body `{ clientName? }`: a device code and a user code.
 * - `POST /v1/auth/device/token`, body `{ device_code, grant_type? }`: the CLI's poll. Its refusals
 *   are RFC 8628 section 3.5 bodies, `400 { error, error_description }`, which device clients
 *   expect; only failures of the platform itself (503) use the error table.
 *
 * Both read a JSON body or, as OAuth clients send it, `application/x-www-form-urlencoded`; other
 * fields a client sends (`client_id`, `scope`) are ignored.
 */
import { Effect, Schema } from "effect"
import type uWS from "uWebSockets.js"
import { DeviceTokenError, pollDeviceToken, PollTracker, requestDeviceCode } from "../src/identity/DeviceLogin.ts"
import { BadRequest } from "../src/platform/Errors.ts"
import { replyForFailure } from "./errors.ts"
import { type HttpReply, type HttpRequest, type MalformedJson, parseJsonBody, PayloadTooLarge, route, Streaming } from "./http.ts"
import type { GatewayOptions } from "./options.ts"

const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" }

/** A printable name of at most 100 characters. */
const ClientName = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(100), Schema.pattern(/^[^\p{Cc}]*$/u))

const CodeRequest = Schema.Struct({ clientName: Schema.optional(ClientName) })

const TokenRequest = Schema.Struct({
  device_code: Schema.String.pipe(Schema.maxLength(256)),
  grant_type: Schema.optional(Schema.String.pipe(Schema.maxLength(256)))
})

/** The body as an object: JSON, a form, or nothing at all (`{}`). */
const readBody = (req: HttpRequest) =>
  Effect.tryPromise({
    try: () => req.body(),
    catch: (error) => (error instanceof PayloadTooLarge ? error : new BadRequest({ reason: "unreadable_body", message: "the request body could not be read" }))
  }).pipe(
    Effect.flatMap((body) => {
      const text = body.toString("utf8")
      if (text.trim() === "") return Effect.succeed<unknown>({})
      if ((req.headers["content-type"] ?? "").toLowerCase().startsWith("application/x-www-form-urlencoded")) {
        return Effect.succeed<unknown>(Object.fromEntries(new URLSearchParams(text)))
      }
      return Effect.try({
        try: () => parseJsonBody(body),
        // parseJsonBody throws nothing else
        catch: (error) => new BadRequest({ reason: (error as MalformedJson).reason, message: (error as MalformedJson).message })
      })
    })
  )

export const deviceRoutes = (
  app: uWS.TemplatedApp,
  options: Pick<GatewayOptions, "run"> & { readonly limits: { readonly maxBodyBytes: number }; readonly baseUrl: () => string }
) => {
  // when each device last polled this node, for slow_down
  const polls = new PollTracker()

  const reply = async <A>(effect: Effect.Effect<A, unknown, any>, ok: (value: A) => HttpReply): Promise<HttpReply | typeof Streaming> => {
    const exit = await options.run(effect)
    if (exit._tag === "Success") return ok(exit.value)
    // an oversized body has already been answered 413
    if (exit.cause._tag === "Fail" && exit.cause.error instanceof PayloadTooLarge) return Streaming
    if (exit.cause._tag === "Fail" && exit.cause.error instanceof DeviceTokenError) {
      const { error, error_description } = exit.cause.error
      return { status: 400, json: { error, error_description }, headers: NO_STORE }
    }
    return replyForFailure(exit.cause)
  }

  route(
    app,
    "post",
    "/v1/auth/device/code",
    (req) =>
      reply(
        readBody(req).pipe(
          Effect.flatMap((raw) =>
            Schema.decodeUnknown(CodeRequest)(raw).pipe(
              Effect.mapError(() => new BadRequest({ reason: "invalid_input", message: "expected { clientName? }: a printable name of 1 to 100 characters" }))
            )
          ),
          Effect.flatMap((input) => requestDeviceCode({ clientName: input.clientName ?? "CLI", baseUrl: options.baseUrl() }))
        ),
        (code) => ({ status: 200, json: code, headers: NO_STORE })
      ),
    options.limits
  )

  route(
    app,
    "post",
    "/v1/auth/device/token",
    (req) =>
      reply(
        readBody(req).pipe(
          Effect.flatMap((raw) => Schema.decodeUnknown(TokenRequest)(raw)),
          Effect.mapError((error) =>
            error instanceof PayloadTooLarge
              ? error
              : new DeviceTokenError({ error: "invalid_request", error_description: "expected { device_code, grant_type? }" })
          ),
          Effect.flatMap((input) => pollDeviceToken({ deviceCode: input.device_code, grantType: input.grant_type }, polls))
        ),
        (token) => ({ status: 200, json: token, headers: NO_STORE })
      ),
    options.limits
  )
}
