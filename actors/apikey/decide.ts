import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { ApiKeyAlreadyExists, ApiKeyNotActive, ApiKeyNotFound, NotARotation, ReservedScopeKey, UnknownPurpose, type ApiKeyError } from "./errors.ts"
import { ApiKeyCreated, ApiKeyRevoked, ApiKeyRotated, type ApiKeyEvent } from "./events.ts"
import { type AcknowledgeRotation, type ApiKeyCommand, CreateApiKey, type IssueCredential, type RevokeApiKey, type RotateApiKey } from "./protocol.ts"
import { isKnownPurpose, RESERVED_SCOPE_KEY } from "./purposes.ts"
import type { ApiKeyState } from "./state.ts"

type Decision = Either.Either<ReadonlyArray<ApiKeyEvent>, ApiKeyError>

const nothing: Decision = Either.right([])

export const decide = (state: ApiKeyState, command: ApiKeyCommand, meta: CommandMeta): Decision => {
  switch (command._tag) {
    case "CreateApiKey":
    case "IssueCredential":
      return create(state, command, meta)
    case "RotateApiKey":
      return rotate(state, command)
    case "AcknowledgeRotation":
      return acknowledge(state, command, meta)
    case "RevokeApiKey":
      return revoke(state, command, meta)
  }
}

const create = (state: ApiKeyState, command: CreateApiKey | IssueCredential, meta: CommandMeta): Decision => {
  if (state._tag !== "Absent") return Either.left(new ApiKeyAlreadyExists({ keyId: command.keyId }))
  const purpose = Object.hasOwn(command.scopes, RESERVED_SCOPE_KEY) ? command.scopes[RESERVED_SCOPE_KEY] : undefined
  if (command._tag === "CreateApiKey" && purpose !== undefined) return Either.left(new ReservedScopeKey({ scopeKey: RESERVED_SCOPE_KEY }))
  if (command._tag === "IssueCredential" && !isKnownPurpose(purpose)) return Either.left(new UnknownPurpose({ purpose: purpose ?? "" }))
  const { _tag, ...fields } = command
  return Either.right([new ApiKeyCreated({ ...fields, createdAt: meta.at })])
}

const rotate = (state: ApiKeyState, command: RotateApiKey): Decision => {
  if (state._tag === "Absent") return Either.left(new ApiKeyNotFound({ keyId: command.keyId }))
  if (state._tag === "Grace" && state.supersededBy === command.newKeyId) return nothing
  if (state._tag !== "Active") return Either.left(new ApiKeyNotActive({ keyId: command.keyId, status: statusOf(state) }))
  return Either.right([new ApiKeyRotated({ keyId: command.keyId, supersededBy: command.newKeyId, graceEndsAt: command.graceEndsAt, successor: command.successor })])
}

/**
 * The successor's creation, to send to its own key: the successor lives in another actor (and
 * partition), so it cannot be one append with the rotation. The rotation's event records it, and
 * whoever completes the rotation (the rotating request, or the sweep after a crash) issues this same
 * key, with the old key's name, place, scopes, role and expiry. Undefined: no rotation recorded one.
 */
export const successorOf = (state: ApiKeyState): CreateApiKey | undefined => {
  if ((state._tag !== "Grace" && state._tag !== "Revoked") || state.supersededBy === null || state.successor === null) return undefined
  return new CreateApiKey({
    keyId: state.supersededBy,
    orgId: state.orgId,
    workspaceId: state.workspaceId,
    createdBy: state.successor.createdBy,
    name: state.name,
    lookupId: state.successor.lookupId,
    secretHash: state.successor.secretHash,
    scopes: state.scopes,
    expiresAt: state.expiresAt,
    customRole: state.customRole,
    machineId: state.machineId,
    supersedes: state.keyId
  })
}

// Acknowledging after the grace has run out revokes nothing: the old key has already stopped.
// A second acknowledgement finds the key revoked and records nothing, so `api_key.revoked` is written once.
const acknowledge = (state: ApiKeyState, command: AcknowledgeRotation, meta: CommandMeta): Decision => {
  switch (state._tag) {
    case "Absent":
      return Either.left(new ApiKeyNotFound({ keyId: command.keyId }))
    case "Active":
      return Either.left(new NotARotation({ keyId: command.keyId, newKeyId: command.newKeyId }))
    case "Grace":
      if (state.supersededBy !== command.newKeyId) return Either.left(new NotARotation({ keyId: command.keyId, newKeyId: command.newKeyId }))
      if (Date.parse(meta.at) >= Date.parse(state.graceEndsAt)) return nothing
      return Either.right([new ApiKeyRevoked({ keyId: command.keyId, revokedAt: meta.at, reason: "rotation_acknowledged" })])
    case "Revoked":
      return nothing
  }
}

// Revoking twice changes nothing and records nothing: the first revocation stands.
const revoke = (state: ApiKeyState, command: RevokeApiKey, meta: CommandMeta): Decision => {
  switch (state._tag) {
    case "Absent":
      return Either.left(new ApiKeyNotFound({ keyId: command.keyId }))
    case "Active":
    case "Grace":
      return Either.right([new ApiKeyRevoked({ keyId: command.keyId, revokedAt: meta.at, reason: "revoked" })])
    case "Revoked":
      return nothing
  }
}

export const statusOf = (state: ApiKeyState): "absent" | "active" | "grace" | "revoked" =>
  state._tag === "Absent" ? "absent" : state._tag === "Active" ? "active" : state._tag === "Grace" ? "grace" : "revoked"
