/**
 * A signed-in person's own account: who they are and where they belong (what the web app starts
 * from), and their two-factor set-up: enrol (a new TOTP secret, shown once, stored only sealed)
 * and confirm with a code from it. Sign-in asks for a code from then on.
 */
import { Clock, Effect, Schema } from "effect"
import * as OTPAuth from "otpauth"
import { UserActor } from "../../actors/user/actor.ts"
import { ConfirmTotp, StartTotpEnrolment } from "../../actors/user/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { type AnyCapability, defineCapability, type Invocation } from "../checkpoint/Capability.ts"
import { Db, query } from "../../streams/Db.ts"
import { BadRequest, Forbidden, SecretShownOnce } from "../platform/Errors.ts"
import { PlatformSecrets } from "../platform/Secrets.ts"
import { newTotp, totpMatches } from "./Sessions.ts"

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

const EnterableWorkspace = Schema.Struct({
  workspaceId: Schema.String,
  slug: Schema.String,
  name: Schema.String,
  /** Null: an Owner's way in, without a role of the workspace's own. */
  role: Schema.NullOr(Schema.Literal("admin", "member", "viewer"))
})

const Membership = Schema.Struct({
  orgId: Schema.String,
  slug: Schema.String,
  name: Schema.String,
  role: Schema.Literal("owner", "member"),
  /** The workspaces the person may enter: those they hold a role in, and for an Owner every one. */
  workspaces: Schema.Array(EnterableWorkspace)
})

export const getAccount = defineCapability({
  ...own,
  name: "account.get",
  description:
    "Your account: user id, email, name, whether two-factor is on, and your organizations (your role in each) with the workspaces you may enter (your role in each). A CLI login sees its own organization only.",
  mutating: false,
  sensitivity: "low",
  input: Schema.Struct({}),
  output: Schema.Struct({ userId: Schema.String, email: Schema.String, name: Schema.String, mfaEnabled: Schema.Boolean, memberships: Schema.Array(Membership) }),
  handler: (invocation) =>
    Effect.gen(function* () {
      const db = yield* Db
      const { principal } = invocation
      const userId = principal.attributedTo
      const [user] = yield* query("account", () => db.sql`
        select u.user_id, u.email, u.name, coalesce(c.mfa_enabled_at is not null, false) as mfa
        from ${db.table("users")} u left join ${db.table("user_credentials")} c using (user_id)
        where u.user_id = ${userId}`)
      if (user === undefined) return yield* Effect.dieMessage(`the signed-in person ${userId} has no account row`)
      // a session belongs to the person; a CLI login was authorized for one organization
      const onlyOrg = principal.credential === "cli_login" ? principal.orgId : null
      const rows = yield* query("account memberships", () => db.sql`
        select o.org_id, o.slug, o.name, m.role, w.workspace_id, w.slug as workspace_slug, w.name as workspace_name, w.role as workspace_role
        from ${db.table("org_members")} m join ${db.table("organizations")} o using (org_id)
        left join lateral (
          select w.workspace_id, w.slug, w.name, wm.role from ${db.table("workspaces")} w
          left join ${db.table("workspace_members")} wm on wm.workspace_id = w.workspace_id and wm.user_id = m.user_id
          where w.org_id = m.org_id and (m.role = 'owner' or wm.role is not null)
        ) w on true
        where m.user_id = ${userId} ${onlyOrg === null ? db.sql`` : db.sql`and m.org_id = ${onlyOrg}`}
        order by o.slug, o.org_id, w.slug`)
      type Entry = Omit<typeof Membership.Type, "workspaces"> & { readonly workspaces: Array<typeof EnterableWorkspace.Type> }
      const memberships = new Map<string, Entry>()
      for (const row of rows) {
        const membership: Entry = memberships.get(row.org_id) ?? { orgId: row.org_id, slug: row.slug, name: row.name, role: row.role, workspaces: [] }
        memberships.set(row.org_id, membership)
        if (row.workspace_id !== null) {
          membership.workspaces.push({ workspaceId: row.workspace_id, slug: row.workspace_slug, name: row.workspace_name, role: row.workspace_role })
        }
      }
      return { userId: user.user_id, email: user.email, name: user.name, mfaEnabled: user.mfa, memberships: [...memberships.values()] }
    })
})

export const accountCapabilities: ReadonlyArray<AnyCapability> = [getAccount, enrolMfa, confirmMfa]
