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
import { HostEvent } from "../../actors/machine/events.ts"
import {
  ClaimWorkOrder,
  IngestEvents,
  RequestCertificateRenewal,
  RequestCodegraphBuild,
  UploadMemory
} from "../../actors/machine/protocol.ts"
import { TelemetryActor } from "../../actors/telemetry/actor.ts"
import { TelemetryIngested, TelemetryPoint } from "../../actors/telemetry/events.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { EventLog } from "../../streams/EventLog.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import { type AnyCapability, defineCapability, type Invocation, type Role } from "../checkpoint/Capability.ts"
import { Db, query } from "../../streams/Db.ts"
import { PageLimit } from "../platform/Paging.ts"
import { BadRequest, Forbidden } from "../platform/Errors.ts"

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

/** Largest JSON size of one batch of host events or telemetry points. */
export const MAX_BATCH_BYTES = 256 * 1024
/** Most host events in one ingestion call. */
export const MAX_HOST_EVENTS = 500
/** Most telemetry points in one call. */
export const MAX_TELEMETRY_POINTS = 1000

const host = {
  scope: "workspace",
  surfaces: ["api"],
  roles: [],
  machines: ["host"],
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin"
} as const

const hostWrites = { ...host, mutating: true, sensitivity: "medium" } as const
const hostReads = { ...host, mutating: false, sensitivity: "medium" } as const

const viewers: ReadonlyArray<Role> = ["org:owner", "workspace:admin"]
const lists = {
  scope: "workspace",
  surfaces: ["api"],
  roles: viewers,
  mutating: false,
  destructive: false,
  needsApproval: false,
  sensitivity: "medium",
  claimedBy: "builtin"
} as const

const iso = (value: Date | string) => (value instanceof Date ? value.toISOString() : value)

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
  JSON.stringify(value).length > MAX_BATCH_BYTES
    ? Effect.fail(new BadRequest({ reason: "batch_too_large", message: `${what} exceed ${MAX_BATCH_BYTES} bytes of JSON; send smaller batches` }))
    : Effect.void

const Text = (max: number) => Schema.String.pipe(Schema.maxLength(max))
const Limit = Schema.optional(PageLimit)

// ---------------------------------------------------------------------------------------------
// host key calls

export const ingestEvents = defineCapability({
  ...hostWrites,
  name: "host.events.ingest",
  description: "Store a batch of events the enrolled machine reports (at most 500, 256 KiB of JSON).",
  input: Schema.Struct({ events: Schema.Array(HostEvent).pipe(Schema.minItems(1), Schema.maxItems(MAX_HOST_EVENTS)) }),
  output: Schema.Struct({ batchId: Schema.String, accepted: Schema.Int }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const caller = yield* callerOf(invocation)
      yield* bounded("the events", input.events)
      const actors = yield* ActorHost
      const batchId = invocation.newId("hev")
      yield* actors.send(MachineActor, caller.machineId, new IngestEvents({ ...caller, batchId, events: input.events }), invocation.meta)
      return { batchId, accepted: input.events.length }
    })
})

export const getPolicy = defineCapability({
  ...hostReads,
  name: "host.policy.get",
  description: "The workspace's policy bundle for the machine. No policy rules can be defined yet, so it is version 0 with no rules.",
  input: Schema.Struct({}),
  output: Schema.Struct({
    workspaceId: Schema.String,
    machineId: Schema.String,
    version: Schema.Int,
    rules: Schema.Tuple(),
    issuedAt: Schema.String
  }),
  handler: (invocation) =>
    Effect.map(callerOf(invocation), (caller) => ({
      workspaceId: caller.workspaceId,
      machineId: caller.machineId,
      version: 0,
      rules: [] as const,
      issuedAt: invocation.at
    }))
})

export const pollCommands = defineCapability({
  ...hostReads,
  name: "host.commands.poll",
  description: "Commands queued for the machine. Nothing queues commands for machines yet, so the list is empty.",
  input: Schema.Struct({}),
  output: Schema.Struct({ machineId: Schema.String, commands: Schema.Tuple() }),
  handler: (invocation) => Effect.map(callerOf(invocation), (caller) => ({ machineId: caller.machineId, commands: [] as const }))
})

export const getGitCredential = defineCapability({
  ...hostReads,
  sensitivity: "high",
  name: "host.git_credential.get",
  description: "A Git credential for the workspace's repositories. The platform keeps no repositories yet, so this is refused with 409 no_repositories.",
  input: Schema.Struct({ repository: Schema.optional(Text(512)) }),
  output: Schema.Struct({ repository: Schema.String, username: Schema.String, password: Schema.String, expiresAt: Schema.String }),
  handler: (invocation) =>
    Effect.flatMap(callerOf(invocation), (caller) => Effect.fail(new NoRepositories({ workspaceId: caller.workspaceId })))
})

export const uploadMemory = defineCapability({
  ...hostWrites,
  name: "host.memory.upload",
  description: "Store a memory (text, up to 16000 characters, with optional tags) for the machine.",
  input: Schema.Struct({
    text: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(16_000)),
    tags: Schema.optional(Schema.Array(Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(64))).pipe(Schema.maxItems(16)))
  }),
  output: Schema.Struct({ memoryId: Schema.String, uploadedAt: Schema.String }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const caller = yield* callerOf(invocation)
      const actors = yield* ActorHost
      const memoryId = invocation.newId("mem")
      yield* actors.send(MachineActor, caller.machineId, new UploadMemory({ ...caller, memoryId, text: input.text, tags: input.tags ?? [] }), invocation.meta)
      return { memoryId, uploadedAt: invocation.at }
    })
})

/** `%`, `_` and `\` match themselves in a LIKE pattern. */
const likeEscaped = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`)

const Memory = Schema.Struct({ memoryId: Schema.String, text: Schema.String, tags: Schema.Array(Schema.String), uploadedAt: Schema.String })

export const recallMemory = defineCapability({
  ...hostReads,
  name: "host.memory.recall",
  description: "The machine's own memories whose text contains the query (case-insensitive), newest first.",
  input: Schema.Struct({ query: Text(500), limit: Limit }),
  output: Schema.Struct({ memories: Schema.Array(Memory) }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const caller = yield* callerOf(invocation)
      const db = yield* Db
      const rows = yield* query("recall memories", () => db.sql`
        select record_id, body, detail, at from ${db.table("machine_records")}
        where machine_id = ${caller.machineId} and workspace_id = ${caller.workspaceId} and kind = 'memory'
          and body ilike ${`%${likeEscaped(input.query)}%`}
        order by at desc, record_id desc limit ${input.limit ?? 20}`)
      return {
        memories: rows.map((r) => ({ memoryId: r.record_id, text: r.body, tags: r.detail.tags ?? [], uploadedAt: iso(r.at) }))
      }
    })
})

export const claimWorkOrder = defineCapability({
  ...hostWrites,
  name: "host.work_orders.claim",
  description:
    "Claim a work order of the workspace for the machine. Claiming it again returns the same claim; a work order another machine claimed is refused with 409 work_order_claimed.",
  input: Schema.Struct({ workOrderId: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(128)) }),
  output: Schema.Struct({ claimId: Schema.String, workOrderId: Schema.String, machineId: Schema.String, claimedAt: Schema.String }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const caller = yield* callerOf(invocation)
      const db = yield* Db
      // Claims are checked against the read model: two machines claiming one work order in the
      // same instant could both succeed (there is no work order actor to decide between them).
      const [held] = yield* query("find work order claim", () => db.sql`
        select record_id, machine_id, at from ${db.table("machine_records")}
        where workspace_id = ${caller.workspaceId} and kind = 'work_order_claim' and subject = ${input.workOrderId}
        order by at, record_id limit 1`)
      if (held !== undefined) {
        if (held.machine_id !== caller.machineId) return yield* new WorkOrderAlreadyClaimed({ workOrderId: input.workOrderId })
        return { claimId: held.record_id, workOrderId: input.workOrderId, machineId: caller.machineId, claimedAt: iso(held.at) }
      }
      const actors = yield* ActorHost
      const claimId = invocation.newId("woc")
      yield* actors.send(MachineActor, caller.machineId, new ClaimWorkOrder({ ...caller, claimId, workOrderId: input.workOrderId }), invocation.meta)
      return { claimId, workOrderId: input.workOrderId, machineId: caller.machineId, claimedAt: invocation.at }
    })
})

export const buildCodegraph = defineCapability({
  ...hostWrites,
  name: "host.codegraph.build",
  description: "Record a request for a local code graph build of a repository. No code graph service acts on it yet; it is stored and listed.",
  input: Schema.Struct({ repository: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(512)), revision: Schema.optional(Text(200)) }),
  output: Schema.Struct({ buildId: Schema.String, status: Schema.Literal("requested"), requestedAt: Schema.String }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const caller = yield* callerOf(invocation)
      const actors = yield* ActorHost
      const buildId = invocation.newId("cgb")
      const command = new RequestCodegraphBuild({ ...caller, buildId, repository: input.repository, revision: input.revision ?? null })
      yield* actors.send(MachineActor, caller.machineId, command, invocation.meta)
      return { buildId, status: "requested" as const, requestedAt: invocation.at }
    })
})

export const renewCertificate = defineCapability({
  ...hostWrites,
  name: "host.certificate.renew",
  description:
    "Record a certificate renewal request, with an optional certificate signing request (PEM). No certificate authority signs it yet; the request is stored and listed.",
  input: Schema.Struct({ csr: Schema.optional(Text(16_384)) }),
  output: Schema.Struct({ renewalId: Schema.String, status: Schema.Literal("requested"), requestedAt: Schema.String }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const caller = yield* callerOf(invocation)
      const actors = yield* ActorHost
      const renewalId = invocation.newId("crt")
      yield* actors.send(MachineActor, caller.machineId, new RequestCertificateRenewal({ ...caller, renewalId, csr: input.csr ?? null }), invocation.meta)
      return { renewalId, status: "requested" as const, requestedAt: invocation.at }
    })
})

// ---------------------------------------------------------------------------------------------
// telemetry key

export const ingestTelemetry = defineCapability({
  name: "telemetry.ingest",
  description: "Store a batch of operational telemetry points (at most 1000, 256 KiB of JSON).",
  scope: "organization",
  surfaces: ["api"],
  roles: [],
  machines: ["telemetry"],
  mutating: true,
  destructive: false,
  needsApproval: false,
  sensitivity: "low",
  claimedBy: "builtin",
  input: Schema.Struct({ points: Schema.Array(TelemetryPoint).pipe(Schema.minItems(1), Schema.maxItems(MAX_TELEMETRY_POINTS)) }),
  output: Schema.Struct({ batchId: Schema.String, accepted: Schema.Int }),
  handler: (invocation, input) =>
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
})

// ---------------------------------------------------------------------------------------------
// what Owners and workspace Admins see

const MachineRow = Schema.Struct({
  machineId: Schema.String,
  keyId: Schema.String,
  enrolledAt: Schema.String,
  lastSeenAt: Schema.String,
  eventsIngested: Schema.Int,
  memories: Schema.Int,
  workOrdersClaimed: Schema.Int,
  codegraphBuilds: Schema.Int,
  certificateRenewals: Schema.Int
})

export const listMachines = defineCapability({
  ...lists,
  name: "machine.list",
  description: "The machines enrolled in the workspace, with counts of what their host keys recorded.",
  input: Schema.Struct({}),
  output: Schema.Struct({ machines: Schema.Array(MachineRow) }),
  handler: (invocation) =>
    Effect.gen(function* () {
      const db = yield* Db
      const rows = yield* query("list machines", () => db.sql`
        select * from ${db.table("machines")} where workspace_id = ${invocation.workspaceId} order by machine_id`)
      return {
        machines: rows.map((r) => ({
          machineId: r.machine_id,
          keyId: r.key_id,
          enrolledAt: iso(r.enrolled_at),
          lastSeenAt: iso(r.last_seen_at),
          eventsIngested: r.events_ingested,
          memories: r.memories,
          workOrdersClaimed: r.work_orders_claimed,
          codegraphBuilds: r.codegraph_builds,
          certificateRenewals: r.certificate_renewals
        }))
      }
    })
})

const RecordKind = Schema.Literal("events", "memory", "work_order_claim", "codegraph_build", "certificate_renewal")

export const listMachineRecords = defineCapability({
  ...lists,
  name: "machine.records.list",
  description: "What the workspace's machines recorded (ingested events, memories, work order claims, build and renewal requests), newest first.",
  input: Schema.Struct({ machineId: Schema.optional(Schema.String), kind: Schema.optional(RecordKind), limit: Limit }),
  output: Schema.Struct({
    records: Schema.Array(
      Schema.Struct({
        recordId: Schema.String,
        machineId: Schema.String,
        kind: RecordKind,
        subject: Schema.NullOr(Schema.String),
        body: Schema.NullOr(Schema.String),
        detail: Schema.Unknown,
        at: Schema.String
      })
    )
  }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const db = yield* Db
      const rows = yield* query("list machine records", () => db.sql`
        select record_id, machine_id, kind, subject, body, detail, at from ${db.table("machine_records")}
        where workspace_id = ${invocation.workspaceId}
          ${input.machineId === undefined ? db.sql`` : db.sql`and machine_id = ${input.machineId}`}
          ${input.kind === undefined ? db.sql`` : db.sql`and kind = ${input.kind}`}
        order by at desc, record_id desc limit ${input.limit ?? 50}`)
      return {
        records: rows.map((r) => ({
          recordId: r.record_id,
          machineId: r.machine_id,
          kind: r.kind,
          subject: r.subject,
          body: r.body,
          detail: r.detail,
          at: iso(r.at)
        }))
      }
    })
})

export const listTelemetry = defineCapability({
  ...lists,
  name: "telemetry.list",
  description: "Telemetry batches sent for the workspace, newest first.",
  input: Schema.Struct({ limit: Limit }),
  output: Schema.Struct({
    batches: Schema.Array(
      Schema.Struct({ batchId: Schema.String, keyId: Schema.String, points: Schema.Array(TelemetryPoint), at: Schema.String })
    )
  }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      const db = yield* Db
      const rows = yield* query("list telemetry", () => db.sql`
        select batch_id, key_id, points, at from ${db.table("telemetry_batches")}
        where org_id = ${invocation.orgId} and workspace_id = ${invocation.workspaceId}
        order by at desc, batch_id desc limit ${input.limit ?? 50}`)
      return { batches: rows.map((r) => ({ batchId: r.batch_id, keyId: r.key_id, points: r.points, at: iso(r.at) })) }
    })
})

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
