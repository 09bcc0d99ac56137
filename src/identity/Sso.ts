/**
 * Organization single sign-on, the identity side: which providers an organization offers, which
 * person a verified provider identity signs in as, and linking that identity to the person. The
 * browser flow (cookies, redirects, the OIDC exchange) is the gateway's (`gateway/sso.ts`); it
 * calls these through its runtime.
 *
 * There is no just-in-time provisioning: a provider account that matches no member of the
 * organization gets 403 `not_a_member`, and no account is created.
 */
import { randomUUID } from "node:crypto"
import { Clock, Effect } from "effect"
import { SsoProviderNotFound } from "../../actors/org/errors.ts"
import { UserActor } from "../../actors/user/actor.ts"
import { LinkSsoIdentity } from "../../actors/user/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { Forbidden } from "../platform/Errors.ts"
import type { VerifiedIdentity } from "./Oidc.ts"
import { memberByEmail, orgIdBySlug, ssoLinkedPerson, verifiedSsoProvidersBySlug } from "./Queries.ts"

/** The organization's verified providers, for the sign-in page; an unknown organization has none. */
export const verifiedSsoProviders = (orgSlug: string) => verifiedSsoProvidersBySlug(orgSlug)

/** The id of the organization a login starts in; an unknown organization answers like an unknown provider. */
export const ssoOrgId = (orgSlug: string, providerId: string) =>
  Effect.gen(function* () {
    const org = yield* orgIdBySlug(orgSlug)
    // an unknown organization answers like an unknown provider: nothing to learn by probing
    if (org === undefined) return yield* new SsoProviderNotFound({ orgId: orgSlug, providerId })
    return org
  })

/**
 * The person this verified identity signs in as, in the organization: an identity already linked
 * at this provider, else a member of the organization with the provider's verified email.
 */
export const ssoPersonFor = (orgId: string, providerId: string, identity: VerifiedIdentity) =>
  Effect.gen(function* () {
    const linked = yield* ssoLinkedPerson(orgId, providerId, identity.subject)
    if (linked !== undefined) {
      if (linked.role === null) {
        return yield* new Forbidden({ reason: "not_a_member", message: "the person linked to this SSO account is not a member of this organization" })
      }
      return linked.userId
    }
    // an unverified email proves nothing about who holds the account
    if (identity.email === null || !identity.emailVerified) {
      return yield* new Forbidden({ reason: "not_a_member", message: "the SSO provider released no verified email that belongs to a member of this organization" })
    }
    const member = yield* memberByEmail(orgId, identity.email)
    if (member === undefined) {
      return yield* new Forbidden({ reason: "not_a_member", message: "no member of this organization has the SSO account's email; ask an Owner to add you" })
    }
    return member
  })

/** Links the provider identity to the person, as the person. */
export const linkSsoIdentity = (link: { readonly userId: string; readonly orgId: string; readonly providerId: string; readonly subject: string }) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const at = new Date(yield* Clock.currentTimeMillis).toISOString()
    yield* host.send(
      UserActor,
      link.userId,
      new LinkSsoIdentity({ userId: link.userId, orgId: link.orgId, providerId: link.providerId, subject: link.subject }),
      { commandId: randomUUID(), at, actor: `user:${link.userId}` }
    )
  })
