import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { type CredentialError, CredentialNotActive, CredentialNotFound, OAuthStateInvalid } from "./errors.ts"
import { AuthorizationConsumed, AuthorizationStarted, Authorized, type CredentialEvent, NeedsReauth, Refreshed, SecretSet } from "./events.ts"
import type { ConsumeAuthorization, CredentialCommand } from "./protocol.ts"
import type { CredentialState, LiveCredential } from "./state.ts"

type Decision = Either.Either<ReadonlyArray<CredentialEvent>, CredentialError>

const live = (state: CredentialState, credentialId: string): Either.Either<LiveCredential, CredentialError> =>
  state._tag === "Live" ? Either.right(state) : Either.left(new CredentialNotFound({ credentialId }))

/** The callback's state: the one pending, not used, not expired, and presented by the person who started it. */
const consume = (state: CredentialState, command: ConsumeAuthorization, meta: CommandMeta): Decision => {
  const { credentialId } = command
  const pending = state._tag === "Live" ? state.pending : null
  if (pending === null || pending.stateHash !== command.stateHash) return Either.left(new OAuthStateInvalid({ credentialId, why: "unknown" }))
  if (pending.consumedAt !== null) return Either.left(new OAuthStateInvalid({ credentialId, why: "used" }))
  if (Date.parse(meta.at) >= Date.parse(pending.expiresAt)) return Either.left(new OAuthStateInvalid({ credentialId, why: "expired" }))
  if (pending.userId !== command.userId) return Either.left(new OAuthStateInvalid({ credentialId, why: "other_person" }))
  return Either.right([new AuthorizationConsumed({ credentialId, stateHash: command.stateHash, at: meta.at })])
}

/** Only an active OAuth credential is refreshed, or falls to `needs_reauth`. */
const activeOAuth = (state: CredentialState, credentialId: string) =>
  Either.flatMap(live(state, credentialId), (credential) =>
    credential.authKind === "oauth" && credential.status === "active"
      ? Either.right(credential)
      : Either.left(new CredentialNotActive({ credentialId, status: credential.status }))
  )

export const decide = (state: CredentialState, command: CredentialCommand, meta: CommandMeta): Decision => {
  switch (command._tag) {
    case "SetSecret": {
      const { _tag, ...fields } = command
      return Either.right([new SecretSet({ ...fields, at: meta.at })])
    }
    case "StartAuthorization": {
      const { _tag, ...fields } = command
      return Either.right([new AuthorizationStarted({ ...fields, at: meta.at })])
    }
    case "ConsumeAuthorization":
      return consume(state, command, meta)
    case "CompleteAuthorization": {
      const pending = state._tag === "Live" ? state.pending : null
      if (pending === null || pending.stateHash !== command.stateHash || pending.consumedAt === null) {
        return Either.left(new OAuthStateInvalid({ credentialId: command.credentialId, why: "unknown" }))
      }
      return Either.right([new Authorized({ credentialId: command.credentialId, tokens: command.tokens, at: meta.at })])
    }
    case "RecordRefresh":
      return Either.map(activeOAuth(state, command.credentialId), () => [new Refreshed({ credentialId: command.credentialId, tokens: command.tokens, at: meta.at })])
    case "MarkNeedsReauth":
      if (state._tag === "Live" && state.status === "needs_reauth") return Either.right([])
      return Either.map(activeOAuth(state, command.credentialId), () => [new NeedsReauth({ credentialId: command.credentialId, reason: command.reason, at: meta.at })])
  }
}
