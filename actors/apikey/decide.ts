import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { ApiKeyAlreadyExists, ApiKeyNotFound, ReservedScopeKey, type ApiKeyError } from "./errors.ts"
import { ApiKeyCreated, ApiKeyRevoked, type ApiKeyEvent } from "./events.ts"
import type { ApiKeyCommand, CreateApiKey, RevokeApiKey } from "./protocol.ts"
import type { ApiKeyState } from "./state.ts"

type Decision = Either.Either<ReadonlyArray<ApiKeyEvent>, ApiKeyError>

const RESERVED_SCOPE_KEY = "purpose"

export const decide = (state: ApiKeyState, command: ApiKeyCommand, meta: CommandMeta): Decision => {
  switch (command._tag) {
    case "CreateApiKey":
      return create(state, command, meta)
    case "RevokeApiKey":
      return revoke(state, command, meta)
  }
}

const create = (state: ApiKeyState, command: CreateApiKey, meta: CommandMeta): Decision => {
  if (state._tag !== "Absent") return Either.left(new ApiKeyAlreadyExists({ keyId: command.keyId }))
  if (Object.hasOwn(command.scopes, RESERVED_SCOPE_KEY)) {
    return Either.left(new ReservedScopeKey({ scopeKey: RESERVED_SCOPE_KEY }))
  }
  const { _tag, ...fields } = command
  return Either.right([new ApiKeyCreated({ ...fields, createdAt: meta.at })])
}

// Revoking twice changes nothing and records nothing: the first revocation stands.
const revoke = (state: ApiKeyState, command: RevokeApiKey, meta: CommandMeta): Decision => {
  switch (state._tag) {
    case "Absent":
      return Either.left(new ApiKeyNotFound({ keyId: command.keyId }))
    case "Active":
      return Either.right([new ApiKeyRevoked({ keyId: command.keyId, revokedAt: meta.at })])
    case "Revoked":
      return Either.right([])
  }
}
