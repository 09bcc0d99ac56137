/**
 * API key management (spec 2.6, 3.3, 4.2, 5): create (`create_api_key`), rotate with a 24-hour
 * grace, acknowledge a rotation, revoke, list, read one (as of a moment too). Keys act with their own role, which is never Owner
 * or Admin, so only people manage keys; rotation, acknowledgement and revocation also need a
 * signed-in session or CLI login (rule 10), and a key gets 403 `forbidden`.
 */
import { Effect } from "effect"
import { ApiKeyActor } from "../../actors/apikey/actor.ts"
import { successorOf } from "../../actors/apikey/decide.ts"
import { AcknowledgeRotation, CreateApiKey, RevokeApiKey, RotateApiKey } from "../../actors/apikey/protocol.ts"
import { rotatedKeyStopsAt } from "../../actors/apikey/state.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { readRowsAsOf } from "../../streams/AsOf.ts"
import { Db } from "../../streams/Db.ts"
import { mintApiKey } from "./ApiKeyToken.ts"
import { issueSuccessor } from "./KeyRotations.ts"
import { customRoleGrants } from "./Auth.ts"
import { type AnyCapability, implement, type Invocation } from "../checkpoint/Capability.ts"
import { momentOf, readAsOf } from "../platform/AsOf.ts"
import { BadRequest, Forbidden, NotFound, SecretShownOnce } from "../platform/Errors.ts"
import * as Api from "./Api.ts"
import { type ApiKeyRow, ordinaryApiKey, ordinaryApiKeys } from "./Queries.ts"

/** Spec 8: the old key keeps working this long after a rotation. */
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000

/** A replay of a request that answered a raw key, which is shown once (spec 2.6). */
const replayedKey = (keyId: string) =>
  new SecretShownOnce({
    message: `API key ${keyId} was made by the first request under this Idempotency-Key; its raw key is shown only once, in that answer. If that answer was lost, revoke ${keyId} and make another`
  })

const iso = (value: Date | null) => (value === null ? null : value.toISOString())

const keyNotFound = (keyId: string) => new NotFound({ reason: "api_key_not_found", message: `no API key ${keyId} here` })

/**
 * The key, if the caller may manage it: an Owner manages every ordinary key of the organization,
 * a workspace Admin the workspace keys of the workspace the path names. Keys of other places and
 * machine or CLI credentials are not found here.
 */
const manageableKey = (invocation: Invocation, keyId: string) =>
  Effect.gen(function* () {
    const key = yield* ordinaryApiKey(invocation.orgId, keyId)
    const owner = invocation.roles.includes("org:owner")
    if (key === undefined || (!owner && key.workspace_id !== invocation.workspaceId)) {
      return yield* keyNotFound(keyId)
    }
    if (!owner && key.workspace_id === null) {
      return yield* new Forbidden({ message: "only an organization Owner manages organization keys" })
    }
    return key
  })

const statusAt = (key: ApiKeyRow, now: number) =>
  key.status !== "revoked" && key.expires_at !== null && key.expires_at.getTime() <= now ? "expired" : key.status

/** What the list and the single read show of a key at `now` (ms): never the hash or the lookup id. */
const summaryOf = (key: ApiKeyRow, now: number) => ({
  publicId: key.key_id,
  name: key.name,
  workspaceId: key.workspace_id,
  status: statusAt(key, now) as "active" | "grace" | "expired" | "revoked",
  createdBy: key.created_by,
  createdAt: key.created_at.toISOString(),
  expiresAt: iso(key.expires_at),
  supersedes: key.supersedes,
  supersededBy: key.superseded_by
})

export const createApiKey = implement(Api.createApiKey, (invocation, input) =>
  Effect.gen(function* () {
    const level = input.level ?? "workspace"
    const orgId = invocation.orgId!
    if (level === "organization" && !invocation.roles.includes("org:owner")) {
      return yield* new Forbidden({ message: "only an organization Owner creates organization keys" })
    }
    if (input.customRole !== undefined && (yield* customRoleGrants(orgId, input.customRole, level)) === undefined) {
      return yield* new BadRequest({ reason: "unknown_custom_role", message: `the organization has no ${level} role ${input.customRole}` })
    }
    const host = yield* ActorHost
    const token = mintApiKey()
    const keyId = invocation.newId("aky")
    const workspaceId = level === "workspace" ? invocation.workspaceId : null
    const expiresAt = input.expiresInDays === undefined ? null : new Date(Date.parse(invocation.at) + input.expiresInDays * 86_400_000).toISOString()
    const created = yield* host.send(ApiKeyActor, keyId, new CreateApiKey({
      keyId,
      orgId,
      workspaceId,
      createdBy: invocation.principal.attributedTo,
      name: input.name,
      lookupId: token.lookupId,
      secretHash: token.secretHash,
      scopes: input.scopes ?? {},
      expiresAt,
      customRole: input.customRole ?? null,
      machineId: null,
      supersedes: null
    }), invocation.meta).pipe(
      // the key's id comes from the Idempotency-Key: a key already there was made by this request's first attempt
      Effect.catchTag("ApiKeyAlreadyExists", () => Effect.fail(replayedKey(keyId)))
    )
    // a replay is decided as the first attempt was, whose raw key only that attempt had
    if (created.state._tag === "Absent" || created.state.lookupId !== token.lookupId) return yield* replayedKey(keyId)
    return { publicId: keyId, rawKey: token.raw, name: input.name, orgId, workspaceId, expiresAt }
  })
)

export const rotateApiKey = implement(Api.rotateApiKey, (invocation, input) =>
  Effect.gen(function* () {
    const old = yield* manageableKey(invocation, input.keyPublicId)
    const host = yield* ActorHost
    const token = mintApiKey()
    const newKeyId = invocation.newId("aky")
    const graceEndsAt = new Date(Date.parse(invocation.at) + ROTATION_GRACE_MS).toISOString()
    // one decision of the old key: into grace, with the successor it issues as a durable intent
    // (KeyRotations.ts); a key that cannot be rotated (already in grace, revoked) gets no successor
    const rotated = yield* host.send(ApiKeyActor, old.key_id, new RotateApiKey({
      keyId: old.key_id,
      newKeyId,
      graceEndsAt,
      successor: { lookupId: token.lookupId, secretHash: token.secretHash, createdBy: invocation.principal.attributedTo }
    }), invocation.meta)
    const { state } = rotated
    const successor = successorOf(state)
    if (successor !== undefined) yield* issueSuccessor(successor, invocation.meta)
    // a replayed request finds the rotation its first attempt recorded, whose raw key only that attempt had
    if (successor === undefined || successor.lookupId !== token.lookupId) return yield* replayedKey(newKeyId)
    // only a rotation records a successor, and it leaves the key in grace (or revoked by an acknowledgement since)
    if (state._tag !== "Grace" && state._tag !== "Revoked") return yield* Effect.dieMessage(`key ${old.key_id} has a successor in state ${state._tag}`)
    return { publicId: successor.keyId, rawKey: token.raw, superseded: { publicId: old.key_id, expiresAt: rotatedKeyStopsAt(state) } }
  })
)

export const acknowledgeRotation = implement(Api.acknowledgeRotation, (invocation, input) =>
  Effect.gen(function* () {
    const successor = yield* manageableKey(invocation, input.keyPublicId)
    if (successor.supersedes === null) {
      return yield* new BadRequest({ reason: "not_a_rotation", message: `API key ${successor.key_id} was not issued by a rotation` })
    }
    const host = yield* ActorHost
    yield* host.send(ApiKeyActor, successor.supersedes, new AcknowledgeRotation({ keyId: successor.supersedes, newKeyId: successor.key_id }), invocation.meta)
    return { acknowledged: true as const, keyPublicId: successor.key_id, revokedKeyPublicId: successor.supersedes }
  })
)

export const revokeApiKey = implement(Api.revokeApiKey, (invocation, input) =>
  Effect.gen(function* () {
    const key = yield* manageableKey(invocation, input.keyPublicId)
    const host = yield* ActorHost
    yield* host.send(ApiKeyActor, key.key_id, new RevokeApiKey({ keyId: key.key_id }), invocation.meta)
    return { revoked: true as const, keyPublicId: key.key_id }
  })
)

export const listApiKeys = implement(Api.listApiKeys, (invocation) =>
  Effect.gen(function* () {
    const owner = invocation.roles.includes("org:owner")
    const rows = yield* ordinaryApiKeys(invocation.orgId, invocation.workspaceId, owner)
    const now = Date.parse(invocation.at)
    return { keys: rows.map((key) => summaryOf(key, now)) }
  })
)

/** The key as the caller's list has it (the list's rule of which keys a manager sees), if there. */
const listedKey = (invocation: Invocation, keyId: string) =>
  Effect.map(ordinaryApiKeys(invocation.orgId, invocation.workspaceId, invocation.roles.includes("org:owner"), keyId), ([key]) => key)

/**
 * The key as it stood at `asOf`: its events up to then, projected into `api_keys` as the live
 * projection does and read by the list's query; it expires as of the moment's time (at a log
 * position: now).
 */
const keyAsOf = (invocation: Invocation, keyId: string, asOf: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const until = yield* momentOf(asOf)
    const { rows } = yield* readAsOf(ApiKeyActor, keyId, `API key ${keyId}`, asOf, invocation.at, (state) => state._tag !== "Absent", () => keyNotFound(keyId))
    const key = yield* readRowsAsOf(db, ["api_keys"], rows, (scratch) => listedKey(invocation, keyId).pipe(Effect.provideService(Db, scratch)))
    // the live row was the caller's, and a key's organization, workspace and purpose are fixed when it is made
    if (key === undefined) return yield* Effect.dieMessage(`API key ${keyId} projected no row of its own`)
    return summaryOf(key, until._tag === "time" ? until.at : Date.parse(invocation.at))
  })

export const getApiKey = implement(Api.getApiKey, (invocation, input) =>
  Effect.gen(function* () {
    // nothing deletes a key: the live row tells whether the caller sees it, at any moment
    const key = yield* listedKey(invocation, input.keyPublicId)
    if (key === undefined) return yield* keyNotFound(input.keyPublicId)
    return input.asOf === undefined ? summaryOf(key, Date.parse(invocation.at)) : yield* keyAsOf(invocation, key.key_id, input.asOf)
  })
)

export const keyCapabilities: ReadonlyArray<AnyCapability> = [createApiKey, rotateApiKey, acknowledgeRotation, revokeApiKey, listApiKeys, getApiKey]
