/**
 * The machine actor (`machine:<machineId>`) as decider specifications: enrolment by the operator or
 * by the machine's first call, one workspace per machine, and each host call recorded as one event;
 * then the rows its projection writes, and the telemetry actor's.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { keyOf } from "../../actors/kernel.ts"
import { MachineActor } from "../../actors/machine/actor.ts"
import { CommandNotPending, MachineEnrolledElsewhere, MachineNotEnrolled } from "../../actors/machine/errors.ts"
import {
  CertificateIssued,
  CertificateRenewalRequested,
  CodegraphBuildRequested,
  CommandAcknowledged,
  CommandEnqueued,
  EventsIngested,
  MachineEnrolled,
  MemoryUploaded,
  WorkOrderClaimed
} from "../../actors/machine/events.ts"
import {
  AcknowledgeCommand,
  ClaimWorkOrder,
  EnqueueCommand,
  EnrolMachine,
  IngestEvents,
  IssueCertificate,
  UploadMemory
} from "../../actors/machine/protocol.ts"
import { TelemetryActor } from "../../actors/telemetry/actor.ts"
import { TelemetryIngested } from "../../actors/telemetry/events.ts"
import { jsonRoundTrip, meta, projectedRows, spec } from "../support/decider.ts"

const T0 = meta().at
const T1 = "2024-05-01T13:00:00.000Z"

const caller = { machineId: "build-01", orgId: "org_1", workspaceId: "wsp_1", keyId: "aky_1" }
const elsewhere = { ...caller, workspaceId: "wsp_2", keyId: "aky_2" }

const enrolled = new MachineEnrolled({ ...caller, at: T0 })
const hostEvents = [{ type: "build.finished", at: "2024-05-01T11:59:00Z", data: { ok: true, ms: 812 } }, { type: "disk.low" }]

const machine = spec(MachineActor)

describe("enrolment", () => {
  it("enrols a new machine in the key's workspace at the command's time", () =>
    machine.given([]).when(new EnrolMachine(caller)).then([enrolled]))

  it("enrols it once: another host key for it in the same workspace changes nothing", () =>
    machine.given([enrolled]).when(new EnrolMachine({ ...caller, keyId: "aky_9" })).thenNothingHappened())

  it("refuses a key that speaks for the machine from another workspace", () =>
    machine
      .given([enrolled])
      .when(new EnrolMachine(elsewhere))
      .thenThrows(new MachineEnrolledElsewhere({ machineId: "build-01", workspaceId: "wsp_2" })))

  it("enrols a machine by its first call when it has seen no enrolment, in the same command", () =>
    machine
      .given([])
      .when(new IngestEvents({ ...caller, batchId: "hev_1", events: hostEvents }), meta({ at: T1 }))
      .then([
        new MachineEnrolled({ ...caller, at: T1 }),
        new EventsIngested({ machineId: "build-01", batchId: "hev_1", events: hostEvents, at: T1 })
      ]))
})

describe("a host key's calls", () => {
  it("records ingested events as sent", () =>
    machine
      .given([enrolled])
      .when(new IngestEvents({ ...caller, batchId: "hev_1", events: hostEvents }), meta({ at: T1 }))
      .then([new EventsIngested({ machineId: "build-01", batchId: "hev_1", events: hostEvents, at: T1 })]))

  it("records a memory with its tags", () =>
    machine
      .given([enrolled])
      .when(new UploadMemory({ ...caller, memoryId: "mem_1", text: "the CI cache lives on /var/cache/ci", tags: ["ci"] }))
      .then([new MemoryUploaded({ machineId: "build-01", memoryId: "mem_1", text: "the CI cache lives on /var/cache/ci", tags: ["ci"], at: T0 })]))

  it("records a work order claim", () =>
    machine
      .given([enrolled])
      .when(new ClaimWorkOrder({ ...caller, claimId: "woc_1", workOrderId: "WO-7" }))
      .then([new WorkOrderClaimed({ machineId: "build-01", claimId: "woc_1", workOrderId: "WO-7", at: T0 })]))

  const issued = { serialNumber: "0a1b", publicKeySha256: "ab".repeat(32), notBefore: T0, notAfter: "2024-05-02T12:00:00.000Z" }

  it("records a certificate the workspace CA issues", () =>
    machine
      .given([enrolled])
      .when(new IssueCertificate({ ...caller, ...issued }))
      .then([new CertificateIssued({ machineId: "build-01", ...issued, at: T0 })]))

  it("still replays the code graph build and renewal requests of old logs, counting the renewals", () => {
    const old = [
      enrolled,
      new CodegraphBuildRequested({ machineId: "build-01", buildId: "cgb_1", repository: "r", revision: null, at: T1 }),
      new CertificateRenewalRequested({ machineId: "build-01", renewalId: "crt_1", csr: null, at: T1 })
    ]
    expect(old.reduce(MachineActor.evolve, MachineActor.initialState)).toMatchObject({ codegraphBuilds: 1, certificateRenewals: 1, lastSeenAt: T1 })
  })

  it.each([
    ["IngestEvents", new IngestEvents({ ...elsewhere, batchId: "hev_1", events: hostEvents })],
    ["UploadMemory", new UploadMemory({ ...elsewhere, memoryId: "mem_1", text: "x", tags: [] })],
    ["ClaimWorkOrder", new ClaimWorkOrder({ ...elsewhere, claimId: "woc_1", workOrderId: "WO-7" })],
    ["IssueCertificate", new IssueCertificate({ ...elsewhere, ...issued })],
    ["AcknowledgeCommand", new AcknowledgeCommand({ ...elsewhere, commandId: "mcm_1", outcome: "succeeded", detail: null })]
  ])("refuses %s from a key of another workspace", (_, command) =>
    machine.given([enrolled]).when(command).thenThrows(new MachineEnrolledElsewhere({ machineId: "build-01", workspaceId: "wsp_2" })))

  it("refuses a key of another organization even with the same workspace id", () =>
    machine
      .given([enrolled])
      .when(new ClaimWorkOrder({ ...caller, orgId: "org_2", claimId: "woc_1", workOrderId: "WO-7" }))
      .thenThrows("MachineEnrolledElsewhere"))
})

describe("queued commands", () => {
  const place = { machineId: "build-01", orgId: "org_1", workspaceId: "wsp_1" }
  const queued = new CommandEnqueued({ machineId: "build-01", commandId: "mcm_1", name: "agent.restart", arguments: { graceSeconds: 5 }, at: T0 })
  const acked = new CommandAcknowledged({ machineId: "build-01", commandId: "mcm_1", outcome: "succeeded", detail: "restarted", at: T1 })
  const ack = new AcknowledgeCommand({ ...caller, commandId: "mcm_1", outcome: "succeeded", detail: "restarted" })

  it("queues a command an Owner or Admin sends for an enrolled machine", () =>
    machine
      .given([enrolled])
      .when(new EnqueueCommand({ ...place, commandId: "mcm_1", name: "agent.restart", arguments: { graceSeconds: 5 } }))
      .then([queued]))

  it.each([
    ["a machine never enrolled", []],
    ["a machine of another workspace", [new MachineEnrolled({ ...elsewhere, at: T0 })]]
  ] as const)("refuses to queue for %s", (_, history) =>
    machine
      .given(history)
      .when(new EnqueueCommand({ ...place, commandId: "mcm_1", name: "agent.restart", arguments: null }))
      .thenThrows(new MachineNotEnrolled({ machineId: "build-01" })))

  it("takes the machine's acknowledgement of a queued command", () =>
    machine.given([enrolled, queued]).when(ack, meta({ at: T1 })).then([acked]))

  it.each([
    ["never queued", [enrolled]],
    ["acknowledged already", [enrolled, queued, acked]]
  ] as const)("refuses to acknowledge a command %s", (_, history) =>
    machine.given(history).when(ack).thenThrows(new CommandNotPending({ machineId: "build-01", commandId: "mcm_1" })))

  it("keeps the pending commands in order until each is acknowledged", () => {
    const second = new CommandEnqueued({ machineId: "build-01", commandId: "mcm_2", name: "cache.clear", arguments: null, at: T0 })
    const state = [enrolled, queued, second, acked].reduce(MachineActor.evolve, MachineActor.initialState)
    expect(state).toMatchObject({ pendingCommands: ["mcm_2"] })
  })

  it("projects one machine_commands row per command and one machine_command_acks row per acknowledgement", () => {
    const rows = projectedRows(MachineActor, keyOf(MachineActor, "build-01"), [[enrolled, T0], [queued, T0], [acked, T1]])
    expect(rows.machine_commands).toEqual([
      {
        command_id: "mcm_1",
        machine_id: "build-01",
        org_id: "org_1",
        workspace_id: "wsp_1",
        name: "agent.restart",
        arguments: { graceSeconds: 5 },
        enqueued_by: expect.any(String),
        enqueued_at: T0
      }
    ])
    expect(rows.machine_command_acks).toEqual([{ command_id: "mcm_1", machine_id: "build-01", outcome: "succeeded", detail: "restarted", acknowledged_at: T1 }])
  })
})

describe("projection", () => {
  const history = [
    [enrolled, T0],
    [new EventsIngested({ machineId: "build-01", batchId: "hev_1", events: hostEvents, at: T1 }), T1],
    [new MemoryUploaded({ machineId: "build-01", memoryId: "mem_1", text: "remember me", tags: ["a"], at: T1 }), T1],
    [new WorkOrderClaimed({ machineId: "build-01", claimId: "woc_1", workOrderId: "WO-7", at: T1 }), T1]
  ] as const

  it("keeps one machines row with counts, one machine_records row per call, and audits the enrolment", () => {
    const rows = projectedRows(MachineActor, keyOf(MachineActor, "build-01"), history)
    expect(rows.machines).toEqual([
      {
        machine_id: "build-01",
        org_id: "org_1",
        workspace_id: "wsp_1",
        key_id: "aky_1",
        enrolled_at: T0,
        last_seen_at: T1,
        events_ingested: 2,
        memories: 1,
        work_orders_claimed: 1,
        codegraph_builds: 0,
        certificate_renewals: 0
      }
    ])
    const base = { machine_id: "build-01", org_id: "org_1", workspace_id: "wsp_1", at: T1 }
    expect(rows.machine_records).toEqual([
      { ...base, record_id: "hev_1", kind: "events", subject: null, body: null, detail: { count: 2, events: hostEvents } },
      { ...base, record_id: "mem_1", kind: "memory", subject: null, body: "remember me", detail: { tags: ["a"] } },
      { ...base, record_id: "woc_1", kind: "work_order_claim", subject: "WO-7", body: null, detail: {} }
    ])
    expect(rows.audit_log).toEqual([
      expect.objectContaining({
        kind: "security",
        event: "machine.enrolled",
        org_id: "org_1",
        workspace_id: "wsp_1",
        detail: { machineId: "build-01", keyId: "aky_1" }
      })
    ])
  })

  it("writes one telemetry_batches row per batch", () => {
    const points = [{ name: "turn.latency_ms", value: 412, unit: "ms", attributes: { model: "offline" } }]
    const batch = new TelemetryIngested({ batchId: "tel_1", orgId: "org_1", workspaceId: "wsp_1", keyId: "aky_t", points, at: T0 })
    expect(projectedRows(TelemetryActor, keyOf(TelemetryActor, "tel_1"), [[batch, T0]])).toEqual({
      telemetry_batches: [
        { batch_id: "tel_1", org_id: "org_1", workspace_id: "wsp_1", key_id: "aky_t", point_count: 1, points, at: T0 }
      ]
    })
  })

  it.effect("round-trips events, commands, state and errors through JSON", () =>
    Effect.gen(function* () {
      for (const [event] of history) expect(yield* jsonRoundTrip(MachineActor.events, event)).toEqual(event)
      const command = new IngestEvents({ ...caller, batchId: "hev_1", events: hostEvents })
      expect(yield* jsonRoundTrip(MachineActor.commands, command)).toEqual(command)
      const state = history.map(([event]) => event).reduce(MachineActor.evolve, MachineActor.initialState)
      expect(yield* jsonRoundTrip(MachineActor.state, state)).toEqual(state)
      const error = new MachineEnrolledElsewhere({ machineId: "build-01", workspaceId: "wsp_2" })
      expect(yield* jsonRoundTrip(MachineActor.errors, error)).toEqual(error)
    }))
})
