import type { CredentialEvent } from "./events.ts"
import type { CredentialState, LiveCredential } from "./state.ts"

const fresh = (event: { readonly credentialId: string; readonly orgId: string; readonly workspaceId: string; readonly listingId: string; readonly at: string }, authKind: "oauth" | "secret"): LiveCredential => ({
  _tag: "Live",
  credentialId: event.credentialId,
  orgId: event.orgId,
  workspaceId: event.workspaceId,
  listingId: event.listingId,
  authKind,
  secret: null,
  accessToken: null,
  refreshToken: null,
  clientId: null,
  clientSecret: null,
  origin: null,
  scopes: [],
  expiresAt: null,
  status: null,
  statusReason: null,
  lastRefreshedAt: null,
  pending: null,
  createdAt: event.at,
  updatedAt: event.at
})

export const evolve = (state: CredentialState, event: CredentialEvent): CredentialState => {
  switch (event._tag) {
    case "credential.secret_set": {
      const base = state._tag === "Live" ? state : fresh(event, "secret")
      return { ...base, authKind: "secret", secret: event.secret, accessToken: null, refreshToken: null, expiresAt: null, status: "active", statusReason: null, pending: null, updatedAt: event.at }
    }
    case "credential.authorization_started": {
      const base = state._tag === "Live" ? state : fresh(event, "oauth")
      const { stateHash, userId, expiresAt, codeVerifier, redirectUri, clientId, clientSecret, origin, scopes } = event
      return { ...base, pending: { stateHash, userId, expiresAt, codeVerifier, redirectUri, clientId, clientSecret, origin, scopes, consumedAt: null }, updatedAt: event.at }
    }
  }
  if (state._tag !== "Live") return state
  switch (event._tag) {
    case "credential.authorization_consumed":
      return state.pending === null ? state : { ...state, pending: { ...state.pending, consumedAt: event.at }, updatedAt: event.at }
    case "credential.authorized": {
      const pending = state.pending!
      return {
        ...state,
        authKind: "oauth",
        secret: null,
        accessToken: event.tokens.accessToken,
        refreshToken: event.tokens.refreshToken,
        expiresAt: event.tokens.expiresAt,
        scopes: event.tokens.scopes,
        clientId: pending.clientId,
        clientSecret: pending.clientSecret,
        origin: pending.origin,
        status: "active",
        statusReason: null,
        pending: null,
        updatedAt: event.at
      }
    }
    case "credential.refreshed":
      return {
        ...state,
        accessToken: event.tokens.accessToken,
        // a server that does not rotate refresh tokens sends none back: the one held stays good
        refreshToken: event.tokens.refreshToken ?? state.refreshToken,
        expiresAt: event.tokens.expiresAt,
        scopes: event.tokens.scopes.length > 0 ? event.tokens.scopes : state.scopes,
        lastRefreshedAt: event.at,
        updatedAt: event.at
      }
    case "credential.needs_reauth":
      return { ...state, status: "needs_reauth", statusReason: event.reason, updatedAt: event.at }
  }
}
