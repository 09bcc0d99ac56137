/**
 * Machine credentials (spec 5 rules 8 and 9): host, gateway and telemetry keys, issued by the
 * operator's command line (`svc issue-key`), never through `create_api_key`, which refuses the
 * reserved `purpose` scope. CLI logins (`cli_session_v1`) come only from the device login.
 *
 * The command line does not join the cluster, so it does not send commands to an owner: it runs
 * the pure decider of a fresh key (a new `aky_` id has no other writer) and appends its events at
 * seq 1, as the checkpoint appends audit records. A host key also enrols its machine
 * (`machine:<machineId>`) the same way when the machine is new; should that enrolment lose a race
 * with the machine's own first call, the call's enrolment stands and this one is ignored by every
 * reader (the machine's decider enrols a machine on its first call if it has seen no enrolment).
 */
import { Clock, Effect, Either, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { ApiKeyActor } from "../../actors/apikey/actor.ts"
import { IssueCredential } from "../../actors/apikey/protocol.ts"
import { OPERATOR } from "../../actors/apikey/purposes.ts"
import { type ActorKind, type CommandMeta, encodeEvent, keyOf } from "../../actors/kernel.ts"
import { MachineActor } from "../../actors/machine/actor.ts"
import { EnrolMachine } from "../../actors/machine/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { EventLog } from "../../streams/EventLog.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import { mintApiKey, newPublicId } from "./ApiKeyToken.ts"
import { findPlace } from "./Auth.ts"
import { enrolledMachine, hostKeyElsewhere, orgIdBySlug } from "./Queries.ts"

/** The purposes the operator may issue; `cli_session_v1` is the device login's alone. */
export const ISSUABLE_PURPOSES = ["svc_host_v1", "svc_gateway_v1", "svc_telemetry_v1"] as const
export type IssuablePurpose = (typeof ISSUABLE_PURPOSES)[number]

const isIssuable = (purpose: string): purpose is IssuablePurpose => (ISSUABLE_PURPOSES as ReadonlyArray<string>).includes(purpose)

/** The operator's request cannot be issued; `reason` says why. */
export class CredentialRefused extends Schema.TaggedError<CredentialRefused>()("CredentialRefused", {
  reason: Schema.Literal(
    "unknown_purpose",
    "purpose_not_issuable",
    "machine_required",
    "machine_not_allowed",
    "invalid_machine_id",
    "invalid_name",
    "workspace_required",
    "organization_not_found",
    "workspace_not_found",
    "machine_enrolled_elsewhere"
  ),
  message: Schema.String
}) {}

export interface IssueCredentialRequest {
  readonly orgSlug: string
  /** Absent: an organization-level credential (not for host keys, whose machine acts in one workspace). */
  readonly workspaceSlug?: string | undefined
  readonly purpose: string
  readonly name?: string | undefined
  /** The machine a host key speaks for: required for `svc_host_v1`, refused for any other purpose. */
  readonly machineId?: string | undefined
}

export interface IssuedCredential {
  readonly keyId: string
  /** Shown once; only its hash is stored. */
  readonly rawKey: string
  readonly orgId: string
  readonly workspaceId: string | null
  readonly purpose: IssuablePurpose
  readonly machineId: string | null
}

/** Machine ids are the host's own names: letters, digits, `.`, `_`, `-`, at most 128. */
const MACHINE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

const refuse = (reason: CredentialRefused["reason"], message: string) => new CredentialRefused({ reason, message })

/**
 * Decides a command on a key that has no events yet and appends what follows at seq 1: the key is
 * fresh (a new id, or a machine nobody has written), so this process is its only writer. Were it
 * not, readers would keep the first seq 1 and ignore this one.
 */
const appendFresh = <S, C extends { readonly _tag: string }, E extends { readonly _tag: string }, Err>(
  kind: ActorKind<S, C, E, Err>,
  id: string,
  command: C,
  meta: CommandMeta
) =>
  Effect.gen(function* () {
    const decision = kind.decide(kind.initialState, command, meta)
    if (Either.isLeft(decision)) return yield* Effect.fail(decision.left)
    const log = yield* EventLog
    const host = yield* ActorHost
    const key = keyOf(kind, id)
    const records = decision.right.map((event, i) => {
      const { type, payload } = encodeEvent(kind, event)
      return { key, seq: i + 1, firstSeq: 1, type, payload, at: meta.at, commandId: meta.commandId, actor: meta.actor }
    })
    // through the partition's single writer, to join its hash chain (docs/audit.md)
    if (records.length > 0) yield* host.append(partitionFor(key, log.partitions), records)
  })

/** Where a machine stands before a host key is issued for it in `workspaceId`. */
const machineStanding = (machineId: string, workspaceId: string) =>
  Effect.gen(function* () {
    const enrolled = yield* enrolledMachine(machineId)
    if (enrolled !== undefined) return enrolled.workspaceId === workspaceId ? "enrolled" : "elsewhere"
    // a host key issued elsewhere whose enrolment is not projected yet
    return (yield* hostKeyElsewhere(machineId, workspaceId)) ? "elsewhere" : "new"
  })

/** Issues a host, gateway or telemetry key. Needs the read models (`Db`) and the log, not the cluster. */
export const issueCredential = Effect.fn("IssueCredential.issueCredential")(function* (request: IssueCredentialRequest) {
  const { purpose } = request
  if (purpose === "cli_session_v1") {
    return yield* refuse("purpose_not_issuable", "cli_session_v1 credentials are issued only by the CLI device login")
  }
  if (!isIssuable(purpose)) {
    return yield* refuse("unknown_purpose", `'${purpose}' is not a purpose the operator can issue (one of ${ISSUABLE_PURPOSES.join(", ")})`)
  }
  const host = purpose === "svc_host_v1"
  const machineId = request.machineId ?? null
  if (host && machineId === null) return yield* refuse("machine_required", "a svc_host_v1 key is issued for one machine: name it with --machine")
  if (!host && machineId !== null) return yield* refuse("machine_not_allowed", `a ${purpose} key speaks for no machine: leave out --machine`)
  if (machineId !== null && !MACHINE_ID.test(machineId)) {
    return yield* refuse("invalid_machine_id", `machine id '${machineId}' must be 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit`)
  }
  if (host && request.workspaceSlug === undefined) {
    return yield* refuse("workspace_required", "a machine acts in one workspace: name it with --workspace")
  }
  const name = (request.name ?? (machineId === null ? `${purpose} key` : `${purpose} key for ${machineId}`)).trim()
  if (name === "" || name.length > 200) return yield* refuse("invalid_name", "the key's name must be 1 to 200 characters")

  let orgId: string
  let workspaceId: string | null = null
  if (request.workspaceSlug === undefined) {
    // slugs are not unique in the read model; routes resolve them the same way (lowest id first)
    const org = yield* orgIdBySlug(request.orgSlug)
    if (org === undefined) return yield* refuse("organization_not_found", `no organization ${request.orgSlug}`)
    orgId = org
  } else {
    const place = yield* findPlace(request.orgSlug, request.workspaceSlug)
    if (place === undefined) return yield* refuse("workspace_not_found", `no workspace ${request.orgSlug}/${request.workspaceSlug}`)
    orgId = place.orgId
    workspaceId = place.workspaceId
  }

  const keyId = newPublicId("aky")
  const meta: CommandMeta = { commandId: randomUUID(), at: new Date(yield* Clock.currentTimeMillis).toISOString(), actor: "system" }
  if (machineId !== null && workspaceId !== null) {
    const standing = yield* machineStanding(machineId, workspaceId)
    if (standing === "elsewhere") {
      return yield* refuse("machine_enrolled_elsewhere", `machine ${machineId} belongs to another workspace; a machine acts in one workspace`)
    }
    // enrolled before the key exists, so the key's first call is likely to find it projected
    if (standing === "new") yield* appendFresh(MachineActor, machineId, new EnrolMachine({ machineId, orgId, workspaceId, keyId }), meta)
  }
  const token = mintApiKey()
  yield* appendFresh(ApiKeyActor, keyId, new IssueCredential({
    keyId,
    orgId,
    workspaceId,
    createdBy: OPERATOR,
    name,
    lookupId: token.lookupId,
    secretHash: token.secretHash,
    scopes: { purpose },
    expiresAt: null,
    customRole: null,
    machineId,
    supersedes: null
  }), meta)
  return { keyId, rawKey: token.raw, orgId, workspaceId, purpose, machineId } satisfies IssuedCredential
})
