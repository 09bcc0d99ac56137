/**
 * A signed-in person's own two-factor set-up: enrol (a new TOTP secret, shown once, stored only
 * sealed) and confirm with a code from it. Sign-in asks for a code from then on.
 */
import { Clock, Effect, Schema } from "effect"
import * as OTPAuth from "otpauth"
import { UserActor } from "../../actors/user/actor.ts"
import { ConfirmTotp, StartTotpEnrolment } from "../../actors/user/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { type AnyCapability, defineCapability, type Invocation } from "../Capabilities.ts"
import { Db, query } from "../../streams/Db.ts"
import { BadRequest, Forbidden, SecretShownOnce } from "../Errors.ts"
import { PlatformSecrets } from "../Secrets.ts"
import { newTotp, totpMatches } from "../Sessions.ts"

const own = {
  scope: "principal",
  roles: ["person"],
  requiresPerson: true,
  surfaces: ["api"],
  sensitivity: "high",
  mutating: true,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin"
} as const

/** Only a browser session sets up its own person's second factor. */
const sessionUser = (invocation: Invocation) =>
  invocation.principal.credential === "session" && invocation.principal.userId !== null
    ? Effect.succeed(invocation.principal.userId)
    : Effect.fail(new Forbidden({ reason: "session_required", message: "two-factor is set up from a signed-in session" }))

export const enrolMfa = defineCapability({
  ...own,
  name: "auth.mfa.enroll",
  description: "Start two-factor enrolment: returns a new TOTP secret and its otpauth URI, shown once.",
  input: Schema.Struct({}),
  output: Schema.Struct({ secret: Schema.String, otpauthUri: Schema.String }),
  handler: (invocation) =>
    Effect.gen(function* () {
      const userId = yield* sessionUser(invocation)
      const secrets = yield* PlatformSecrets
      const host = yield* ActorHost
      const secret = new OTPAuth.Secret({ size: 20 }).base32
      const secretSealed = secrets.seal(secret)
      const started = yield* host.send(UserActor, userId, new StartTotpEnrolment({ userId, secretSealed }), invocation.meta)
      // a replay (same Idempotency-Key) is decided as the first attempt was, whose secret only that attempt had
      if (started.state._tag !== "Registered" || started.state.totpPendingSealed !== secretSealed) {
        return yield* new SecretShownOnce({
          message: "two-factor enrolment was started by the first request under this Idempotency-Key; its secret is shown only once, in that answer. If that answer was lost, start enrolment again with a new key"
        })
      }
      return { secret, otpauthUri: newTotp(secret, userId).toString() }
    })
})

export const confirmMfa = defineCapability({
  ...own,
  name: "auth.mfa.confirm",
  description: "Finish two-factor enrolment with a current code from the new secret.",
  input: Schema.Struct({ code: Schema.String.pipe(Schema.maxLength(16)) }),
  output: Schema.Struct({ mfaEnabled: Schema.Literal(true) }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const userId = yield* sessionUser(invocation)
      const db = yield* Db
      const secrets = yield* PlatformSecrets
      const [row] = yield* query("pending totp", () => db.sql`
        select totp_pending_sealed from ${db.table("user_credentials")} where user_id = ${userId}`)
      const sealed: string | null = row?.totp_pending_sealed ?? null
      const secret = sealed === null ? undefined : secrets.open(sealed)
      if (sealed === null || secret === undefined) {
        return yield* new BadRequest({ reason: "no_pending_enrolment", message: "start two-factor enrolment first" })
      }
      if (!totpMatches(secret, input.code, yield* Clock.currentTimeMillis)) {
        return yield* new BadRequest({ reason: "invalid_mfa_code", message: "the code does not match; check the authenticator's clock" })
      }
      const host = yield* ActorHost
      yield* host.send(UserActor, userId, new ConfirmTotp({ userId, secretSealed: sealed }), invocation.meta)
      return { mfaEnabled: true as const }
    })
})

export const accountCapabilities: ReadonlyArray<AnyCapability> = [enrolMfa, confirmMfa]
