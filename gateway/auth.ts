/**
 * Routes that establish or end a browser session: sign-in with email and password, sign-out.
 * They are not capabilities (nobody is authenticated yet, or the session itself ends); every
 * other session call goes through the checkpoint.
 */
import { Effect, Schema } from "effect"
import type uWS from "uWebSockets.js"
import { authenticate } from "../src/identity/Auth.ts"
import { BadRequest, Unauthorized } from "../src/platform/Errors.ts"
import { sessionCookie, signInWithPassword, signOut } from "../src/identity/Sessions.ts"
import { replyForFailure } from "./errors.ts"
import { type HttpReply, jsonBody, route } from "./http.ts"
import type { GatewayOptions } from "./options.ts"

const SignInRequest = Schema.Struct({
  email: Schema.String.pipe(Schema.maxLength(320)),
  password: Schema.String.pipe(Schema.maxLength(1024)),
  /** The TOTP code, once two-factor is on. */
  code: Schema.optional(Schema.String.pipe(Schema.maxLength(16)))
})

const decodeInput = <A, I>(schema: Schema.Schema<A, I>) => (raw: unknown) =>
  Schema.decodeUnknown(schema, { onExcessProperty: "error" })(raw).pipe(
    Effect.mapError(() => new BadRequest({ reason: "invalid_input", message: "expected { email, password, code? }" }))
  )

export const authRoutes = (app: uWS.TemplatedApp, options: GatewayOptions & { readonly limits: { readonly maxBodyBytes: number } }) => {
  const reply = async <A>(effect: Effect.Effect<A, unknown, any>, ok: (value: A) => HttpReply): Promise<HttpReply> => {
    const exit = await options.run(effect)
    return exit._tag === "Success" ? ok(exit.value) : replyForFailure(exit.cause)
  }

  route(
    app,
    "post",
    "/v1/auth/sign-in",
    (req) =>
      reply(jsonBody(req).pipe(Effect.flatMap(decodeInput(SignInRequest)), Effect.flatMap((input) => signInWithPassword(input, req.remoteAddress))), (session) => ({
        status: 200,
        json: { userId: session.userId, sessionId: session.sessionId, expiresAt: session.expiresAt },
        headers: { "set-cookie": sessionCookie(session, options.secureCookies), "cache-control": "no-store" }
      })),
    options.limits
  )

  route(app, "post", "/v1/auth/sign-out", (req) =>
    reply(
      Effect.gen(function* () {
        const principal = yield* authenticate({ authorization: undefined, cookie: req.headers.cookie })
        if (principal.sessionId === null || principal.userId === null) {
          return yield* new Unauthorized({ reason: "missing_credential", message: "no sign-in session" })
        }
        yield* signOut(principal.sessionId, principal.userId)
      }),
      () => ({ status: 200, json: { signedOut: true }, headers: { "set-cookie": sessionCookie(null, options.secureCookies) } })
    )
  )
}
