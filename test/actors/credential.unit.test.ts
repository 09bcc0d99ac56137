import { describe, it } from "vitest"
import { CredentialActor } from "../../actors/credential/actor.ts"
import { AuthorizationConsumed, AuthorizationStarted, Authorized, NeedsReauth, Refreshed, SecretSet } from "../../actors/credential/events.ts"
import { CompleteAuthorization, ConsumeAuthorization, MarkNeedsReauth, RecordRefresh, SetSecret, StartAuthorization } from "../../actors/credential/protocol.ts"
import { meta, spec } from "../support/decider.ts"

const at = meta().at
const later = (ms: number) => meta({ at: new Date(Date.parse(at) + ms).toISOString() })
const id = { credentialId: "mcrd_1" }
const place = { orgId: "org_1", workspaceId: "ws_1", listingId: "porg_1" }
const sealed = (text: string) => ({ ciphertext: `v1.${text}`, keyId: "mcp_cred_v1" })
const pending = {
  ...id,
  ...place,
  stateHash: "h1",
  userId: "usr_1",
  expiresAt: new Date(Date.parse(at) + 600_000).toISOString(),
  codeVerifier: sealed("verifier"),
  redirectUri: "https://svc.example.com/api/v1/plugins/oauth/callback",
  clientId: "client-1",
  clientSecret: null,
  origin: { authorizationServerUrl: "https://as.example.com", resource: "https://mcp.example.com/mcp" },
  scopes: ["mcp:tools"]
}
const started = new AuthorizationStarted({ ...pending, at })
const consumed = new AuthorizationConsumed({ ...id, stateHash: "h1", at })
const tokens = { accessToken: sealed("access"), refreshToken: sealed("refresh"), expiresAt: "2024-05-01T13:00:00.000Z", scopes: ["mcp:tools"] }
const authorized = new Authorized({ ...id, tokens, at })

describe("credential (spec 3.5)", () => {
  const credential = spec(CredentialActor)

  it("secret entry makes it active", () =>
    credential.given([]).when(new SetSecret({ ...id, ...place, secret: sealed("s") })).then([new SecretSet({ ...id, ...place, secret: sealed("s"), at })]))

  it("an authorization starts, its state is consumed once by the person who started it, then its code completes it", () => {
    credential.given([]).when(new StartAuthorization(pending)).then([started])
    credential.given([started]).when(new ConsumeAuthorization({ ...id, stateHash: "h1", userId: "usr_1" })).then([consumed])
    credential.given([started, consumed]).when(new CompleteAuthorization({ ...id, stateHash: "h1", tokens })).then([authorized])
  })

  it("refuses a state that is unknown, used, expired, another person's, or not consumed", () => {
    const consume = new ConsumeAuthorization({ ...id, stateHash: "h1", userId: "usr_1" })
    credential.given([started]).when(new ConsumeAuthorization({ ...id, stateHash: "other", userId: "usr_1" })).thenThrows((e) => e._tag === "OAuthStateInvalid" && e.why === "unknown")
    credential.given([started, consumed]).when(consume).thenThrows((e) => e._tag === "OAuthStateInvalid" && e.why === "used")
    credential.given([started]).when(consume, later(600_000)).thenThrows((e) => e._tag === "OAuthStateInvalid" && e.why === "expired")
    credential.given([started]).when(new ConsumeAuthorization({ ...id, stateHash: "h1", userId: "usr_2" })).thenThrows((e) => e._tag === "OAuthStateInvalid" && e.why === "other_person")
    credential.given([started]).when(new CompleteAuthorization({ ...id, stateHash: "h1", tokens })).thenThrows("OAuthStateInvalid")
  })

  it("an active credential is refreshed; a failed refresh makes it needs_reauth, once", () => {
    credential.given([started, consumed, authorized]).when(new RecordRefresh({ ...id, tokens })).then([new Refreshed({ ...id, tokens, at })])
    const needs = new NeedsReauth({ ...id, reason: "invalid_grant", at })
    credential.given([started, consumed, authorized]).when(new MarkNeedsReauth({ ...id, reason: "invalid_grant" })).then([needs])
    credential.given([started, consumed, authorized, needs]).when(new MarkNeedsReauth({ ...id, reason: "invalid_grant" })).thenNothingHappened()
    credential.given([started, consumed, authorized, needs]).when(new RecordRefresh({ ...id, tokens })).thenThrows("CredentialNotActive")
  })

  it("re-authentication from needs_reauth completes back to active", () => {
    const needs = new NeedsReauth({ ...id, reason: "invalid_grant", at })
    const again = new AuthorizationStarted({ ...pending, stateHash: "h2", at })
    const consumedAgain = new AuthorizationConsumed({ ...id, stateHash: "h2", at })
    credential.given([started, consumed, authorized, needs, again, consumedAgain]).when(new CompleteAuthorization({ ...id, stateHash: "h2", tokens })).then([new Authorized({ ...id, tokens, at })])
  })
})
