/**
 * `plugin/oauth.refresh-watcher` (spec 6.3.3, rule 11 e): every `OAUTH_REFRESH_CHECK_SECONDS`, the
 * node owning a credential's partition refreshes each active OAuth credential whose `expires_at`
 * falls within `OAUTH_REFRESH_LEAD_SECONDS`. When the authorization server refuses the refresh
 * (its OAuth error: a revoked grant, a client gone), or the token expired while the server could
 * not be reached, the credential becomes `needs_reauth` and the organization's alert recipients
 * are notified (M2's `notifyReauth`: in the app, and by email when the setting says so).
 */
import { Clock, Effect, Layer, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import { CredentialActor } from "../../actors/credential/actor.ts"
import { MarkNeedsReauth } from "../../actors/credential/protocol.ts"
import { ORG_SHARED_WORKSPACE } from "../../actors/credential/state.ts"
import { keyOf } from "../../actors/kernel.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { EventLog } from "../../streams/EventLog.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import { slugsOf } from "../identity/Auth.ts"
import { notifyReauth } from "./Notify.ts"
import { type OAuthServerFailed, refreshCredential } from "./OAuth.ts"
import { PluginSettings } from "./PluginSettings.ts"
import { credentialsDueBy, type DueCredential } from "./Queries.ts"

/** OAuth errors that say the server may answer otherwise later: retried at the next look. */
const TRANSIENT = new Set(["server_error", "temporarily_unavailable"])

const systemMeta = (at: number) => ({ commandId: randomUUID(), at: new Date(at).toISOString(), actor: "system" })

/** The credential can no longer be refreshed: `needs_reauth`, and the alert once it became so. */
const markNeedsReauth = (credential: DueCredential, reason: string) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const now = yield* Clock.currentTimeMillis
    const { credentialId } = credential
    const { events } = yield* host.send(CredentialActor, credentialId, new MarkNeedsReauth({ credentialId, reason }), systemMeta(now))
    if (events.length === 0) return
    yield* notifyReauth({
      orgId: credential.orgId,
      // an organization's shared credential: its alert goes to the organization's recipients, each led to a workspace of theirs
      workspaceId: credential.workspaceId === ORG_SHARED_WORKSPACE ? null : credential.workspaceId,
      listingId: credential.listingId,
      listingName: credential.listingName,
      orgSlug: yield* slugsOf(credential.orgId, null),
      causeId: `${credentialId}:needs_reauth:${new Date(now).toISOString()}`
    })
    yield* Effect.logInfo("plugins: a credential needs re-authentication").pipe(Effect.annotateLogs({ credentialId, listingId: credential.listingId, reason }))
  })

const refreshOne = (credential: DueCredential) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    yield* refreshCredential(credential, systemMeta(now)).pipe(
      Effect.asVoid,
      Effect.catchTag("OAuthServerFailed", (failure: OAuthServerFailed) => {
        const refused = failure.oauthError !== null && !TRANSIENT.has(failure.oauthError)
        if (refused || now >= credential.expiresAt) return markNeedsReauth(credential, failure.oauthError ?? failure.message)
        return Effect.logWarning("plugins: a token refresh failed; retrying at the next look").pipe(
          Effect.annotateLogs({ credentialId: credential.credentialId, step: failure.step, error: failure.message })
        )
      })
    )
  })

export const layer = Layer.scopedDiscard(
  Effect.gen(function* () {
    const settings = yield* PluginSettings
    if (settings.refreshCheckSeconds <= 0) return
    const host = yield* ActorHost
    const log = yield* EventLog
    const context = yield* Effect.context<never>()
    const owned = (credentialId: string) => host.ownership().ready.includes(partitionFor(keyOf(CredentialActor, credentialId), log.partitions))
    const look = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const dueBy = new Date(now + settings.refreshLeadSeconds * 1000).toISOString()
      const due = (yield* credentialsDueBy(dueBy)).filter((credential) => owned(credential.credentialId))
      yield* Effect.forEach(
        due,
        (credential) =>
          refreshOne(credential).pipe(
            Effect.catchAllCause((cause) => Effect.logWarning(`plugins: refreshing ${credential.credentialId} failed`, cause))
          ),
        { concurrency: 4, discard: true }
      )
    }).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("plugins: the refresh watcher's look failed", cause)),
      Effect.provide(context)
    ) as Effect.Effect<void, never, never>
    yield* Effect.forkScoped(Effect.repeat(look, Schedule.spaced(`${settings.refreshCheckSeconds} seconds`)))
  })
)
