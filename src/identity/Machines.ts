/**
 * Machine credentials' own calls (spec 5 rule 8). A host key (`svc_host_v1`) speaks for the one
 * machine it was issued for: event ingestion, policy bundle, command polling, a Git credential,
 * memory upload and recall, work order claims, code graph builds and certificate renewal. A
 * telemetry key (`svc_telemetry_v1`) only ingests telemetry. The spec fixes none of their
 * payloads; each call here does the least that is true: it is recorded (an event of the machine's
 * actor, projected), listed, and audited by the checkpoint, and where the platform has nothing to
 * give (no policy rules, no queued commands, no repositories) it says so instead of inventing it.
 *
 * Owners and workspace Admins see what was recorded through `machine.list`,
 * `machine.records.list` and `telemetry.list`.
 */
import { Effect, Schema } from "effect"
import { encodeEvent, keyOf } from "../../actors/kernel.ts"
import { MachineActor } from "../../actors/machine/actor.ts"
import {
  ClaimWorkOrder,
  IngestEvents,
  RequestCertificateRenewal,
  RequestCodegraphBuild,
  UploadMemory
} from "../../actors/machine/protocol.ts"
import { TelemetryActor } from "../../actors/telemetry/actor.ts"
import { TelemetryIngested } from "../../actors/telemetry/events.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { EventLog } from "../../streams/EventLog.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import { type AnyCapability, implement, type Invocation } from "../checkpoint/Capability.ts"
import { BadRequest, Forbidden } from "../platform/Errors.ts"
import * as Api from "./Api.ts"
import { firstWorkOrderClaim, machineMemoriesMatching, workspaceMachineRecords, workspaceMachines, workspaceTelemetryBatches } from "./Queries.ts"

/** 409 `conflict`, reason `no_repositories`: the workspace has no repositories to give a Git
 * credential for (the platform keeps no repository registry yet). */
export class NoRepositories extends Schema.TaggedError<NoRepositories>()("NoRepositories", {
  workspaceId: Schema.String
}) {
  override get message() {
    return `workspace ${this.workspaceId} has no repositories, so there is no Git credential to issue`
  }
}

/** 409 `conflict`, reason `work_order_claimed`: another machine of the workspace holds the claim. */
export class WorkOrderAlreadyClaimed extends Schema.TaggedError<WorkOrderAlreadyClaimed>()("WorkOrderAlreadyClaimed", {
  workOrderId: Schema.String
}) {
  override get message() {
    return `work order ${this.workOrderId} is claimed by another machine`
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
  Effect.map(callerOf(invocation), (caller) => ({
    workspaceId: caller.workspaceId,
    machineId: caller.machineId,
    version: 0,
    rules: [] as const,
    issuedAt: invocation.at
  }))
)

export const pollCommands = implement(Api.pollCommands, (invocation) =>
  Effect.map(callerOf(invocation), (caller) => ({ machineId: caller.machineId, commands: [] as const }))
)

export const getGitCredential = implement(Api.getGitCredential, (invocation) =>
  Effect.flatMap(callerOf(invocation), (caller) => Effect.fail(new NoRepositories({ workspaceId: caller.workspaceId })))
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
    // Claims are checked against the read model: two machines claiming one work order in the
    // same instant could both succeed (there is no work order actor to decide between them).
    const held = yield* firstWorkOrderClaim(caller.workspaceId, input.workOrderId)
    if (held !== undefined) {
      if (held.machineId !== caller.machineId) return yield* new WorkOrderAlreadyClaimed({ workOrderId: input.workOrderId })
      return { claimId: held.claimId, workOrderId: input.workOrderId, machineId: caller.machineId, claimedAt: held.claimedAt }
    }
    const actors = yield* ActorHost
    const claimId = invocation.newId("woc")
    yield* actors.send(MachineActor, caller.machineId, new ClaimWorkOrder({ ...caller, claimId, workOrderId: input.workOrderId }), invocation.meta)
    return { claimId, workOrderId: input.workOrderId, machineId: caller.machineId, claimedAt: invocation.at }
  })
)

export const buildCodegraph = implement(Api.buildCodegraph, (invocation, input) =>
  Effect.gen(function* () {
    const caller = yield* callerOf(invocation)
    const actors = yield* ActorHost
    const buildId = invocation.newId("cgb")
    const command = new RequestCodegraphBuild({ ...caller, buildId, repository: input.repository, revision: input.revision ?? null })
    yield* actors.send(MachineActor, caller.machineId, command, invocation.meta)
    return { buildId, status: "requested" as const, requestedAt: invocation.at }
  })
)

export const renewCertificate = implement(Api.renewCertificate, (invocation, input) =>
  Effect.gen(function* () {
    const caller = yield* callerOf(invocation)
    const actors = yield* ActorHost
    const renewalId = invocation.newId("crt")
    yield* actors.send(MachineActor, caller.machineId, new RequestCertificateRenewal({ ...caller, renewalId, csr: input.csr ?? null }), invocation.meta)
    return { renewalId, status: "requested" as const, requestedAt: invocation.at }
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

export const machineCapabilities: ReadonlyArray<AnyCapability> = [
  ingestEvents,
  getPolicy,
  pollCommands,
  getGitCredential,
  uploadMemory,
  recallMemory,
  claimWorkOrder,
  buildCodegraph,
  renewCertificate,
  ingestTelemetry,
  listMachines,
  listMachineRecords,
  listTelemetry
]
