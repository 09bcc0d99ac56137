/**
 * Machine credentials' own calls (spec 5 rule 8). A host key (`svc_host_v1`) speaks for the one
 * machine it was issued for: event ingestion, the policy bundle, command polling and
 * acknowledgement, a Git credential, memory upload and recall, work order claims and certificate
 * renewal. A telemetry key (`svc_telemetry_v1`) only ingests telemetry. Each call is recorded (an
 * event of the machine's actor, projected) or reads what an Owner or workspace Admin set (the
 * workspace's fleet actor: policy bundle, repositories; queued commands on the machine's actor),
 * and is audited by the checkpoint. Certificates and Git credentials are signed by the workspace's
 * machine CA (WorkspaceCa.ts).
 *
 * Owners and workspace Admins set the policy, queue commands and register repositories, and see
 * what was recorded through `machine.list`, `machine.records.list`, `machine.commands.list` and
 * `telemetry.list`.
 */
import { createHash, createPublicKey, type KeyObject } from "node:crypto"
import { Effect, Schema } from "effect"
import { FleetActor } from "../../actors/fleet/actor.ts"
import { RegisterRepository, RemoveRepository, SetPolicy } from "../../actors/fleet/protocol.ts"
import { encodeEvent, keyOf } from "../../actors/kernel.ts"
import { MachineActor } from "../../actors/machine/actor.ts"
import { AcknowledgeCommand, ClaimWorkOrder as RecordWorkOrderClaim, EnqueueCommand, IngestEvents, IssueCertificate, UploadMemory } from "../../actors/machine/protocol.ts"
import { WorkOrderActor } from "../../actors/workorder/actor.ts"
import { ClaimWorkOrder, CreateWorkOrder } from "../../actors/workorder/protocol.ts"
import { TelemetryActor } from "../../actors/telemetry/actor.ts"
import { TelemetryIngested } from "../../actors/telemetry/events.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { EventLog } from "../../streams/EventLog.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import { type AnyCapability, implement, type Invocation } from "../checkpoint/Capability.ts"
import { BadRequest, Forbidden } from "../platform/Errors.ts"
import { PlatformSecrets } from "../platform/Secrets.ts"
import * as Api from "./Api.ts"
import {
  machineCommands,
  machineMemoriesMatching,
  workspaceMachineRecords,
  workspaceMachines,
  workspacePolicy,
  workspaceRepositories,
  workspaceTelemetryBatches,
  workspaceWorkOrders
} from "./Queries.ts"
import { GIT_CREDENTIAL_MINUTES, publicKeySha256, workspaceCa } from "./WorkspaceCa.ts"

/** 409 `conflict`, reason `no_repositories`: no Owner or Admin registered a repository to the
 * workspace, so there is nothing to give a Git credential for. */
export class NoRepositories extends Schema.TaggedError<NoRepositories>()("NoRepositories", {
  workspaceId: Schema.String
}) {
  override get message() {
    return `workspace ${this.workspaceId} has no repositories, so there is no Git credential to issue`
  }
}

/** 404 `not_found`, reason `repository_not_registered`: the repository is not the workspace's. */
export class RepositoryNotRegistered extends Schema.TaggedError<RepositoryNotRegistered>()("RepositoryNotRegistered", {
  repository: Schema.String
}) {
  override get message() {
    return `repository ${this.repository} is not registered to this workspace`
  }
}

/**
 * The machine a host key speaks for, in the workspace the call acts in. Inputs never name a
 * machine: a host key acts for its own enrolled machine, and for no other.
 */
const callerOf = (invocation: Invocation) => {
  const { principal } = invocation
  if (principal.credential !== "host_key" || principal.machineId === null || principal.apiKeyId === null || invocation.orgId === null || invocation.workspaceId === null) {
    return Effect.fail(new Forbidden({ reason: "machine_not_enrolled", message: `${invocation.capability} is called with the host key of an enrolled machine` }))
  }
  return Effect.succeed({ machineId: principal.machineId, orgId: invocation.orgId, workspaceId: invocation.workspaceId, keyId: principal.apiKeyId })
}

const bounded = (what: string, value: unknown) =>
  JSON.stringify(value).length > Api.MAX_BATCH_BYTES
    ? Effect.fail(new BadRequest({ reason: "batch_too_large", message: `${what} exceed ${Api.MAX_BATCH_BYTES} bytes of JSON; send smaller batches` }))
    : Effect.void

// ---------------------------------------------------------------------------------------------
// host key calls

export const ingestEvents = implement(Api.ingestEvents, (invocation, input) =>
  Effect.gen(function* () {
    const caller = yield* callerOf(invocation)
    yield* bounded("the events", input.events)
    const actors = yield* ActorHost
    const batchId = invocation.newId("hev")
    yield* actors.send(MachineActor, caller.machineId, new IngestEvents({ ...caller, batchId, events: input.events }), invocation.meta)
    return { batchId, accepted: input.events.length }
  })
)

export const getPolicy = implement(Api.getPolicy, (invocation) =>
  Effect.gen(function* () {
    const caller = yield* callerOf(invocation)
    const policy = yield* workspacePolicy(caller.workspaceId)
    return { workspaceId: caller.workspaceId, machineId: caller.machineId, ...policy, issuedAt: invocation.at }
  })
)

export const pollCommands = implement(Api.pollCommands, (invocation) =>
  Effect.gen(function* () {
    const caller = yield* callerOf(invocation)
    const pending = yield* machineCommands(caller.workspaceId, { machineId: caller.machineId, pendingOnly: true }, 100)
    return { machineId: caller.machineId, commands: pending.map(({ commandId, name, arguments: args, enqueuedAt }) => ({ commandId, name, arguments: args, enqueuedAt })) }
  })
)

export const acknowledgeCommand = implement(Api.acknowledgeCommand, (invocation, input) =>
  Effect.gen(function* () {
    const caller = yield* callerOf(invocation)
    const actors = yield* ActorHost
    const { commandId, outcome } = input
    yield* actors.send(MachineActor, caller.machineId, new AcknowledgeCommand({ ...caller, commandId, outcome, detail: input.detail ?? null }), invocation.meta)
    return { commandId, outcome, acknowledgedAt: invocation.at }
  })
)

/** The repository a Git credential is for: the one named, if registered; else the only one. */
const repositoryFor = (workspaceId: string, named: string | undefined) =>
  Effect.gen(function* () {
    const registered = (yield* workspaceRepositories(workspaceId)).map((r) => r.repository)
    if (registered.length === 0) return yield* new NoRepositories({ workspaceId })
    if (named !== undefined) return registered.includes(named.trim()) ? named.trim() : yield* new RepositoryNotRegistered({ repository: named })
    if (registered.length > 1) {
      return yield* new BadRequest({ reason: "repository_required", message: `the workspace has ${registered.length} repositories; name one with repository` })
    }
    return registered[0]!
  })

export const getGitCredential = implement(Api.getGitCredential, (invocation, input) =>
  Effect.gen(function* () {
    const caller = yield* callerOf(invocation)
    const repository = yield* repositoryFor(caller.workspaceId, input.repository)
    const ca = workspaceCa(yield* PlatformSecrets, caller.workspaceId)
    const issuedAt = Math.floor(Date.parse(invocation.at) / 1000)
    const expiresAt = issuedAt + GIT_CREDENTIAL_MINUTES * 60
    // read access to one repository, for one machine: what a Git server trusting the CA checks
    const password = ca.signJwt({
      iss: `workspace:${caller.workspaceId}`,
      sub: `machine:${caller.machineId}`,
      aud: repository,
      scope: "git:read",
      iat: issuedAt,
      exp: expiresAt,
      jti: invocation.newId("gcr")
    })
    return { repository, username: caller.machineId, password, expiresAt: new Date(expiresAt * 1000).toISOString() }
  })
)

export const uploadMemory = implement(Api.uploadMemory, (invocation, input) =>
  Effect.gen(function* () {
    const caller = yield* callerOf(invocation)
    const actors = yield* ActorHost
    const memoryId = invocation.newId("mem")
    yield* actors.send(MachineActor, caller.machineId, new UploadMemory({ ...caller, memoryId, text: input.text, tags: input.tags ?? [] }), invocation.meta)
    return { memoryId, uploadedAt: invocation.at }
  })
)

export const recallMemory = implement(Api.recallMemory, (invocation, input) =>
  Effect.gen(function* () {
    const caller = yield* callerOf(invocation)
    return { memories: yield* machineMemoriesMatching(caller.machineId, caller.workspaceId, input.query, input.limit ?? 20) }
  })
)

export const claimWorkOrder = implement(Api.claimWorkOrder, (invocation, input) =>
  Effect.gen(function* () {
    const caller = yield* callerOf(invocation)
    const actors = yield* ActorHost
    const { workOrderId } = input
    const { machineId, orgId, workspaceId } = caller
    // the work order's single writer decides who holds it: one machine, however many ask at once
    const accepted = yield* actors.send(WorkOrderActor, workOrderId, new ClaimWorkOrder({ workOrderId, orgId, workspaceId, machineId, claimId: invocation.newId("woc") }), invocation.meta)
    const claim = accepted.state._tag === "created" ? accepted.state.claim : null
    if (claim === null) return yield* Effect.die(new Error(`work order ${workOrderId} accepted a claim it does not hold`))
    // and the machine's own record of it, once
    if (accepted.events.length > 0) yield* actors.send(MachineActor, machineId, new RecordWorkOrderClaim({ ...caller, claimId: claim.claimId, workOrderId }), invocation.meta)
    return { claimId: claim.claimId, workOrderId, machineId, claimedAt: claim.claimedAt }
  })
)

const publicKeyOf = (pem: string): Effect.Effect<KeyObject, BadRequest> =>
  Effect.try({
    try: () => createPublicKey(pem),
    catch: () => new BadRequest({ reason: "invalid_public_key", message: "publicKey is not a PEM public key (SubjectPublicKeyInfo)" })
  })

export const renewCertificate = implement(Api.renewCertificate, (invocation, input) =>
  Effect.gen(function* () {
    const caller = yield* callerOf(invocation)
    const publicKey = yield* publicKeyOf(input.publicKey)
    const ca = workspaceCa(yield* PlatformSecrets, caller.workspaceId)
    // the serial comes from the invocation's id, so a retry under the same idempotency key signs the same certificate
    const serialNumber = createHash("sha256").update(invocation.newId("crt")).digest("hex").slice(0, 32).replace(/^[89a-f]/, "7")
    const notBefore = new Date(Math.floor(Date.parse(invocation.at) / 1000) * 1000)
    const issued = ca.issue(caller.machineId, publicKey, serialNumber, notBefore)
    const actors = yield* ActorHost
    const command = new IssueCertificate({ ...caller, serialNumber, publicKeySha256: publicKeySha256(publicKey), notBefore: issued.notBefore, notAfter: issued.notAfter })
    // recorded before it is handed out: no certificate leaves that the log does not hold
    yield* actors.send(MachineActor, caller.machineId, command, invocation.meta)
    return { ...issued, caCertificate: ca.certificate }
  })
)

// ---------------------------------------------------------------------------------------------
// telemetry key

export const ingestTelemetry = implement(Api.ingestTelemetry, (invocation, input) =>
  Effect.gen(function* () {
    const { principal } = invocation
    if (principal.credential !== "telemetry_key" || principal.apiKeyId === null || invocation.orgId === null) {
      return yield* new Forbidden({ reason: "purpose_not_allowed", message: "telemetry.ingest is called with a telemetry key" })
    }
    yield* bounded("the points", input.points)
    const log = yield* EventLog
    const host = yield* ActorHost
    const batchId = invocation.newId("tel")
    const event = new TelemetryIngested({
      batchId,
      orgId: invocation.orgId,
      workspaceId: invocation.workspaceId,
      keyId: principal.apiKeyId,
      points: input.points,
      at: invocation.at
    })
    // a fresh batch id has no other writer: seq 1, appended directly (a retry under the same
    // idempotency key makes the same batch id, and readers ignore the repeated seq 1)
    const { type, payload } = encodeEvent(TelemetryActor, event)
    const key = keyOf(TelemetryActor, batchId)
    yield* host.append(partitionFor(key, log.partitions), [{ key, seq: 1, firstSeq: 1, type, payload, at: invocation.at, commandId: invocation.meta.commandId, actor: invocation.meta.actor }])
    return { batchId, accepted: input.points.length }
  })
)

// ---------------------------------------------------------------------------------------------
// what Owners and workspace Admins see

export const listMachines = implement(Api.listMachines, (invocation) =>
  Effect.map(workspaceMachines(invocation.workspaceId!), (machines) => ({ machines }))
)

export const listMachineRecords = implement(Api.listMachineRecords, (invocation, input) =>
  Effect.map(workspaceMachineRecords(invocation.workspaceId!, input.machineId, input.kind, input.limit ?? 50), (records) => ({ records }))
)

export const listTelemetry = implement(Api.listTelemetry, (invocation, input) =>
  Effect.map(workspaceTelemetryBatches(invocation.orgId!, invocation.workspaceId!, input.limit ?? 50), (batches) => ({ batches }))
)

// ---------------------------------------------------------------------------------------------
// what Owners and workspace Admins set

const placeOf = (invocation: Invocation) => ({ orgId: invocation.orgId!, workspaceId: invocation.workspaceId! })

export const setMachinePolicy = implement(Api.setMachinePolicy, (invocation, input) =>
  Effect.gen(function* () {
    const actors = yield* ActorHost
    const place = placeOf(invocation)
    const accepted = yield* actors.send(FleetActor, place.workspaceId, new SetPolicy({ ...place, rules: input.rules, expectedVersion: input.expectedVersion ?? null }), invocation.meta)
    return { version: accepted.state.policyVersion, rules: accepted.state.rules }
  })
)

export const enqueueMachineCommand = implement(Api.enqueueMachineCommand, (invocation, input) =>
  Effect.gen(function* () {
    const actors = yield* ActorHost
    const commandId = invocation.newId("mcm")
    const { machineId, name } = input
    yield* actors.send(MachineActor, machineId, new EnqueueCommand({ ...placeOf(invocation), machineId, commandId, name, arguments: input.arguments ?? null }), invocation.meta)
    return { commandId, machineId, name, enqueuedAt: invocation.at }
  })
)

export const listMachineCommands = implement(Api.listMachineCommands, (invocation, input) =>
  Effect.map(machineCommands(invocation.workspaceId!, { machineId: input.machineId, pendingOnly: false }, input.limit ?? 50), (commands) => ({ commands }))
)

export const registerRepository = implement(Api.registerRepository, (invocation, input) =>
  Effect.gen(function* () {
    const actors = yield* ActorHost
    const place = placeOf(invocation)
    yield* actors.send(FleetActor, place.workspaceId, new RegisterRepository({ ...place, repository: input.repository }), invocation.meta)
    return { repository: input.repository }
  })
)

export const removeRepository = implement(Api.removeRepository, (invocation, input) =>
  Effect.gen(function* () {
    const actors = yield* ActorHost
    const place = placeOf(invocation)
    yield* actors.send(FleetActor, place.workspaceId, new RemoveRepository({ ...place, repository: input.repository }), invocation.meta)
    return { repository: input.repository, removed: true as const }
  })
)

export const listRepositories = implement(Api.listRepositories, (invocation) =>
  Effect.map(workspaceRepositories(invocation.workspaceId!), (repositories) => ({ repositories }))
)

export const createWorkOrder = implement(Api.createWorkOrder, (invocation, input) =>
  Effect.gen(function* () {
    const actors = yield* ActorHost
    const workOrderId = invocation.newId("wko")
    const command = new CreateWorkOrder({ ...placeOf(invocation), workOrderId, title: input.title, detail: input.detail ?? null })
    yield* actors.send(WorkOrderActor, workOrderId, command, invocation.meta)
    return { workOrderId, title: input.title, createdAt: invocation.at }
  })
)

export const listWorkOrders = implement(Api.listWorkOrders, (invocation, input) =>
  Effect.map(workspaceWorkOrders(invocation.workspaceId!, input.limit ?? 50), (workOrders) => ({ workOrders }))
)

export const getMachineCa = implement(Api.getMachineCa, (invocation) =>
  Effect.map(PlatformSecrets, (secrets) => ({ certificate: workspaceCa(secrets, invocation.workspaceId!).certificate }))
)

export const machineCapabilities: ReadonlyArray<AnyCapability> = [
  ingestEvents,
  getPolicy,
  pollCommands,
  acknowledgeCommand,
  getGitCredential,
  uploadMemory,
  recallMemory,
  claimWorkOrder,
  renewCertificate,
  ingestTelemetry,
  listMachines,
  listMachineRecords,
  listTelemetry,
  setMachinePolicy,
  enqueueMachineCommand,
  listMachineCommands,
  registerRepository,
  removeRepository,
  listRepositories,
  createWorkOrder,
  listWorkOrders,
  getMachineCa
]
