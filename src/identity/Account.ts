/**
 * A signed-in person's own account: who they are and where they belong (what the web app starts
 * from), and their two-factor set-up: enrol (a new TOTP secret, shown once, stored only sealed)
 * and confirm with a code from it. Sign-in asks for a code from then on.
 */
import { Clock, Effect } from "effect"
import * as OTPAuth from "otpauth"
import { UserActor } from "../../actors/user/actor.ts"
import { ConfirmTotp, StartTotpEnrolment } from "../../actors/user/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { type AnyCapability, implement, type Invocation } from "../checkpoint/Capability.ts"
import { BadRequest, Forbidden, SecretShownOnce } from "../platform/Errors.ts"
import { PlatformSecrets } from "../platform/Secrets.ts"
import * as Api from "./Api.ts"
import { accountMembershipRows, accountOf, pendingTotpSealed } from "./Queries.ts"
import { newTotp, totpMatches } from "./Sessions.ts"

/** Only a browser session sets up its own person's second factor. */
const sessionUser = (invocation: Invocation) =>
  invocation.principal.credential === "session" && invocation.principal.userId !== null
    ? Effect.succeed(invocation.principal.userId)
    : Effect.fail(new Forbidden({ reason: "session_required", message: "two-factor is set up from a signed-in session" }))

export const enrolMfa = implement(Api.enrolMfa, (invocation) =>
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
)

export const confirmMfa = implement(Api.confirmMfa, (invocation, input) =>
  Effect.gen(function* () {
    const userId = yield* sessionUser(invocation)
    const secrets = yield* PlatformSecrets
    const sealed = yield* pendingTotpSealed(userId)
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
)

export const getAccount = implement(Api.getAccount, (invocation) =>
  Effect.gen(function* () {
    const { principal } = invocation
    const userId = principal.attributedTo
    const user = yield* accountOf(userId)
    if (user === undefined) return yield* Effect.dieMessage(`the signed-in person ${userId} has no account row`)
    // a session belongs to the person; a CLI login was authorized for one organization
    const onlyOrg = principal.credential === "cli_login" ? principal.orgId : null
    const rows = yield* accountMembershipRows(userId, onlyOrg)
    type Entry = Omit<typeof Api.AccountMembership.Type, "workspaces"> & { readonly workspaces: Array<typeof Api.EnterableWorkspace.Type> }
    const memberships = new Map<string, Entry>()
    for (const row of rows) {
      const membership: Entry = memberships.get(row.org_id) ?? { orgId: row.org_id, slug: row.slug, name: row.name, role: row.role, workspaces: [] }
      memberships.set(row.org_id, membership)
      if (row.workspace_id !== null) {
        membership.workspaces.push({ workspaceId: row.workspace_id, slug: row.workspace_slug, name: row.workspace_name, role: row.workspace_role })
      }
    }
    return { userId: user.userId, email: user.email, name: user.name, mfaEnabled: user.mfaEnabled, memberships: [...memberships.values()] }
  })
)

export const accountCapabilities: ReadonlyArray<AnyCapability> = [getAccount, enrolMfa, confirmMfa]
