/**
 * Decider specifications of the access rules' actors: key issuing, rotation, acknowledgement and
 * revocation; sessions; passwords, two-factor and SSO identities; organization security settings,
 * SSO providers and custom roles; uniqueness claims.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { ApiKeyActor } from "../../actors/apikey/actor.ts"
import { successorOf } from "../../actors/apikey/decide.ts"
import { ApiKeyCreated, type ApiKeyEvent, ApiKeyRevoked, ApiKeyRotated } from "../../actors/apikey/events.ts"
import { AcknowledgeRotation, CreateApiKey, IssueCredential, RevokeApiKey, RotateApiKey } from "../../actors/apikey/protocol.ts"
import { ClaimActor } from "../../actors/claim/actor.ts"
import { Claimed } from "../../actors/claim/events.ts"
import { Claim } from "../../actors/claim/protocol.ts"
import { OrgActor } from "../../actors/org/actor.ts"
import { CustomRoleDefined, OrganizationCreated, PlanSet, SecuritySet, SsoProviderRegistered, SsoProviderVerified } from "../../actors/org/events.ts"
import { DefineCustomRole, RegisterSsoProvider, SetSecurity, VerifySsoProvider } from "../../actors/org/protocol.ts"
import { SessionActor } from "../../actors/session/actor.ts"
import { SessionEnded, SessionStarted } from "../../actors/session/events.ts"
import { EndSession, StartSession } from "../../actors/session/protocol.ts"
import { UserActor } from "../../actors/user/actor.ts"
import { MfaEnabled, PasswordSet, SsoIdentityLinked, TotpEnrolmentStarted, UserRegistered } from "../../actors/user/events.ts"
import { ConfirmTotp, LinkSsoIdentity, SetPassword, StartTotpEnrolment } from "../../actors/user/protocol.ts"
import { jsonRoundTrip, meta, spec } from "../support/decider.ts"

const at = meta().at
const inGrace = "2024-05-01T18:00:00.000Z"
const graceEnds = "2024-05-02T12:00:00.000Z"
const afterGrace = "2024-05-02T12:00:01.000Z"

describe("apikey actor: issuing, rotation, acknowledgement, revocation", () => {
  const apikey = spec(ApiKeyActor)
  const fields = {
    keyId: "aky_old",
    orgId: "org_1",
    workspaceId: "wsp_1",
    createdBy: "usr_alice",
    name: "CI",
    lookupId: "AAAAAAAAAAAAAAAA",
    secretHash: "hash",
    scopes: {},
    expiresAt: null,
    customRole: null,
    machineId: null,
    supersedes: null
  }
  const created = new ApiKeyCreated({ ...fields, createdAt: at })
  const successor = { lookupId: "BBBBBBBBBBBBBBBB", secretHash: "new hash", createdBy: "usr_bob" }
  const rotate = (newKeyId: string) => new RotateApiKey({ keyId: "aky_old", newKeyId, graceEndsAt: graceEnds, successor })
  const rotated = new ApiKeyRotated({ keyId: "aky_old", supersededBy: "aky_new", graceEndsAt: graceEnds, successor })

  it.each(["cli_session_v1", "svc_host_v1", "svc_gateway_v1", "svc_telemetry_v1"])("issues a %s credential", (purpose) =>
    apikey
      .given([])
      .when(new IssueCredential({ ...fields, scopes: { purpose } }))
      .then([new ApiKeyCreated({ ...fields, scopes: { purpose }, createdAt: at })]))

  it("refuses to issue a purpose no rule knows, and create_api_key refuses any purpose", () => {
    apikey.given([]).when(new IssueCredential({ ...fields, scopes: { purpose: "svc_root_v1" } })).thenThrows("UnknownPurpose")
    apikey.given([]).when(new IssueCredential(fields)).thenThrows("UnknownPurpose")
    apikey.given([]).when(new CreateApiKey({ ...fields, scopes: { purpose: "svc_host_v1" } })).thenThrows("ReservedScopeKey")
  })

  const table: ReadonlyArray<readonly [string, ReadonlyArray<typeof created | typeof rotated | ApiKeyRevoked>, RotateApiKey | AcknowledgeRotation | RevokeApiKey, string, ReadonlyArray<unknown> | string]> = [
    ["rotate an active key", [created], rotate("aky_new"), at, [rotated]],
    ["rotate again to the same successor", [created, rotated], rotate("aky_new"), at, []],
    ["rotate a key already in grace", [created, rotated], rotate("aky_other"), at, "ApiKeyNotActive"],
    ["rotate a key that does not exist", [], rotate("aky_new"), at, "ApiKeyNotFound"],
    ["acknowledge in grace", [created, rotated], new AcknowledgeRotation({ keyId: "aky_old", newKeyId: "aky_new" }), inGrace,
      [new ApiKeyRevoked({ keyId: "aky_old", revokedAt: inGrace, reason: "rotation_acknowledged" })]],
    ["acknowledge after the grace", [created, rotated], new AcknowledgeRotation({ keyId: "aky_old", newKeyId: "aky_new" }), afterGrace, []],
    ["acknowledge with a key that is not the successor", [created, rotated], new AcknowledgeRotation({ keyId: "aky_old", newKeyId: "aky_else" }), inGrace, "NotARotation"],
    ["acknowledge a key never rotated", [created], new AcknowledgeRotation({ keyId: "aky_old", newKeyId: "aky_new" }), inGrace, "NotARotation"],
    ["acknowledge twice", [created, rotated, new ApiKeyRevoked({ keyId: "aky_old", revokedAt: inGrace, reason: "rotation_acknowledged" })],
      new AcknowledgeRotation({ keyId: "aky_old", newKeyId: "aky_new" }), inGrace, []],
    ["revoke a key in grace", [created, rotated], new RevokeApiKey({ keyId: "aky_old" }), inGrace, [new ApiKeyRevoked({ keyId: "aky_old", revokedAt: inGrace, reason: "revoked" })]],
    ["revoke a revoked key", [created, new ApiKeyRevoked({ keyId: "aky_old", revokedAt: inGrace })], new RevokeApiKey({ keyId: "aky_old" }), inGrace, []]
  ]
  it.each(table)("%s", (_, history, command, when, outcome) => {
    const result = apikey.given(history).when(command, meta({ at: when }))
    if (typeof outcome === "string") result.thenThrows(outcome as never)
    else result.then(outcome as never)
  })

  // The two keys are two actors, so a rotation is two appends; the first records the second as its
  // intent: every history holding the rotation names the successor's creation, from the old key's
  // fields and the rotation's secret, and that creation makes the successor whoever sends it.
  const issued = new CreateApiKey({ ...fields, keyId: "aky_new", ...successor, supersedes: "aky_old" })
  const successorTable: ReadonlyArray<readonly [string, ReadonlyArray<ApiKeyEvent>, CreateApiKey | undefined]> = [
    ["active, never rotated", [created], undefined],
    ["in grace", [created, rotated], issued],
    ["revoked in grace, before its successor was issued", [created, rotated, new ApiKeyRevoked({ keyId: "aky_old", revokedAt: inGrace })], issued],
    ["acknowledged", [created, rotated, new ApiKeyRevoked({ keyId: "aky_old", revokedAt: inGrace, reason: "rotation_acknowledged" })], issued],
    ["revoked, never rotated", [created, new ApiKeyRevoked({ keyId: "aky_old", revokedAt: inGrace })], undefined],
    ["in grace from a rotation recorded without its successor", [created, new ApiKeyRotated({ keyId: "aky_old", supersededBy: "aky_new", graceEndsAt: graceEnds })], undefined]
  ]
  it.each(successorTable)("the successor a key names: %s", (_, history, expected) => {
    const named = successorOf(history.reduce(ApiKeyActor.evolve, ApiKeyActor.initialState))
    expect(named === undefined ? undefined : Schema.encodeSync(ApiKeyActor.commands)(named)).toEqual(
      expected === undefined ? undefined : Schema.encodeSync(ApiKeyActor.commands)(expected)
    )
  })

  it("the rotation's intent issues the successor once, with the old key's fields", () => {
    const intent = successorOf([created, rotated].reduce(ApiKeyActor.evolve, ApiKeyActor.initialState))!
    apikey.given([]).when(intent).then([new ApiKeyCreated({ ...fields, keyId: "aky_new", ...successor, supersedes: "aky_old", createdAt: at })])
    apikey.given([new ApiKeyCreated({ ...fields, keyId: "aky_new", ...successor, supersedes: "aky_old", createdAt: at })]).when(intent).thenThrows("ApiKeyAlreadyExists")
  })

  it.effect("a rotation, its command and the state in grace survive the log's JSON", () =>
    Effect.gen(function* () {
      expect(yield* jsonRoundTrip(ApiKeyActor.events, rotated)).toEqual(rotated)
      expect(yield* jsonRoundTrip(ApiKeyActor.commands, rotate("aky_new"))).toEqual(rotate("aky_new"))
      const inGraceState = [created, rotated].reduce(ApiKeyActor.evolve, ApiKeyActor.initialState)
      expect(yield* jsonRoundTrip(ApiKeyActor.state, inGraceState)).toEqual(inGraceState)
    }))
})

describe("session actor", () => {
  const session = spec(SessionActor)
  const start = {
    sessionId: "ses_1",
    userId: "usr_1",
    lookupId: "L",
    secretHash: "H",
    method: "sso" as const,
    sso: { orgId: "org_1", providerId: "sso_1" },
    mfa: false,
    orgIds: ["org_1"],
    expiresAt: graceEnds
  }
  const started = new SessionStarted({ ...start, startedAt: at })

  it("starts a session once", () => {
    session.given([]).when(new StartSession(start)).then([started])
    session.given([started]).when(new StartSession(start)).thenThrows("SessionAlreadyExists")
  })

  it("ends a session once; signing out twice records one sign-out", () => {
    session.given([started]).when(new EndSession({ sessionId: "ses_1" }), meta({ at: inGrace })).then([new SessionEnded({ sessionId: "ses_1", endedAt: inGrace })])
    session.given([started, new SessionEnded({ sessionId: "ses_1", endedAt: inGrace })]).when(new EndSession({ sessionId: "ses_1" })).thenNothingHappened()
    session.given([]).when(new EndSession({ sessionId: "ses_1" })).thenThrows("SessionNotFound")
  })
})

describe("user actor: password, two-factor, SSO identities", () => {
  const user = spec(UserActor)
  const registered = new UserRegistered({ userId: "usr_1", email: "a@b.example", name: "A", createdAt: at })
  const enrolling = new TotpEnrolmentStarted({ userId: "usr_1", secretSealed: "v1.sealed-1" })

  it("sets a password hash only for a registered user", () => {
    user.given([registered]).when(new SetPassword({ userId: "usr_1", passwordHash: "scrypt$..." })).then([new PasswordSet({ userId: "usr_1", passwordHash: "scrypt$..." })])
    user.given([]).when(new SetPassword({ userId: "usr_1", passwordHash: "scrypt$..." })).thenThrows("UserNotFound")
  })

  it("enables two-factor only for the secret pending confirmation", () => {
    user.given([registered]).when(new StartTotpEnrolment({ userId: "usr_1", secretSealed: "v1.sealed-1" })).then([enrolling])
    user.given([registered, enrolling]).when(new ConfirmTotp({ userId: "usr_1", secretSealed: "v1.sealed-1" })).then([new MfaEnabled({ userId: "usr_1", enabledAt: at })])
    // a newer enrolment replaced it: a stale confirmation enables nothing
    const newer = new TotpEnrolmentStarted({ userId: "usr_1", secretSealed: "v1.sealed-2" })
    user.given([registered, enrolling, newer]).when(new ConfirmTotp({ userId: "usr_1", secretSealed: "v1.sealed-1" })).thenThrows("NoPendingTotp")
    user.given([registered]).when(new ConfirmTotp({ userId: "usr_1", secretSealed: "v1.sealed-1" })).thenThrows("NoPendingTotp")
  })

  it("links one subject per provider", () => {
    const link = new LinkSsoIdentity({ userId: "usr_1", orgId: "org_1", providerId: "sso_1", subject: "sub-1" })
    const linked = new SsoIdentityLinked({ userId: "usr_1", orgId: "org_1", providerId: "sso_1", subject: "sub-1", linkedAt: at })
    user.given([registered]).when(link).then([linked])
    user.given([registered, linked]).when(link).thenNothingHappened()
    user.given([registered, linked]).when(new LinkSsoIdentity({ userId: "usr_1", orgId: "org_1", providerId: "sso_1", subject: "sub-2" })).thenThrows("SsoIdentityConflict")
  })
})

describe("organization actor: security settings, SSO providers, custom roles", () => {
  const org = spec(OrgActor)
  const created = new OrganizationCreated({ orgId: "org_1", slug: "acme", name: "Acme", createdAt: at })
  const provider = { orgId: "org_1", providerId: "sso_1", name: "IdP", issuer: "https://idp.example", clientId: "c", clientSecretSealed: "v1.x" }
  const registered = new SsoProviderRegistered({ ...provider, registeredAt: at })
  const verified = new SsoProviderVerified({ orgId: "org_1", providerId: "sso_1", verifiedAt: at })

  it("requires SSO only once a provider is verified", () => {
    const requireSso = new SetSecurity({ orgId: "org_1", requireSso: true, mfaGraceEndsAt: graceEnds })
    org.given([created, registered]).when(requireSso).thenThrows("NoVerifiedSsoProvider")
    org.given([created, registered, verified]).when(requireSso)
      .then([new SecuritySet({ orgId: "org_1", requireSso: true, requireMfa: false, mfaGraceEndsAt: null })])
  })

  it("keeps the two-factor grace of a requirement already on, and records nothing that would not change", () => {
    const on = new SecuritySet({ orgId: "org_1", requireSso: false, requireMfa: true, mfaGraceEndsAt: graceEnds })
    org.given([created]).when(new SetSecurity({ orgId: "org_1", requireMfa: true, mfaGraceEndsAt: graceEnds })).then([on])
    org.given([created, on]).when(new SetSecurity({ orgId: "org_1", requireMfa: true, mfaGraceEndsAt: afterGrace })).thenNothingHappened()
    org.given([created, on]).when(new SetSecurity({ orgId: "org_1", requireMfa: false, mfaGraceEndsAt: afterGrace }))
      .then([new SecuritySet({ orgId: "org_1", requireSso: false, requireMfa: false, mfaGraceEndsAt: null })])
  })

  it("registers a provider once and verifies it once", () => {
    org.given([created]).when(new RegisterSsoProvider(provider)).then([registered])
    org.given([created, registered]).when(new RegisterSsoProvider(provider)).thenThrows("SsoProviderExists")
    org.given([created, registered]).when(new VerifySsoProvider({ orgId: "org_1", providerId: "sso_1" })).then([verified])
    org.given([created, registered, verified]).when(new VerifySsoProvider({ orgId: "org_1", providerId: "sso_1" })).thenNothingHappened()
    org.given([created]).when(new VerifySsoProvider({ orgId: "org_1", providerId: "sso_9" })).thenThrows("SsoProviderNotFound")
  })

  it("defines custom roles on the enterprise plan only, within their scope", () => {
    const role = new DefineCustomRole({ orgId: "org_1", name: "fleet", scope: "organization", grants: ["org:member", "workspace:member"] })
    org.given([created]).when(role).thenThrows("EnterprisePlanRequired")
    const enterprise = new PlanSet({ orgId: "org_1", plan: "enterprise" })
    org.given([created, enterprise]).when(role).then([new CustomRoleDefined({ orgId: "org_1", name: "fleet", scope: "organization", grants: ["org:member", "workspace:member"] })])
    org.given([created, enterprise]).when(new DefineCustomRole({ orgId: "org_1", name: "ws", scope: "workspace", grants: ["org:member"] })).thenThrows("GrantOutOfScope")
  })
})

describe("claim actor", () => {
  const claim = spec(ClaimActor)
  const made = new Claimed({ namespace: "email", value: "a@b.example", ownerId: "usr_1", claimedAt: at })
  it("keeps a name for its first owner", () => {
    claim.given([]).when(new Claim({ namespace: "email", value: "a@b.example", ownerId: "usr_1" })).then([made])
    claim.given([made]).when(new Claim({ namespace: "email", value: "a@b.example", ownerId: "usr_1" })).thenNothingHappened()
    claim.given([made]).when(new Claim({ namespace: "email", value: "a@b.example", ownerId: "usr_2" })).thenThrows("NameTaken")
  })
})
