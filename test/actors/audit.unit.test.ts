import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { AuditActor } from "../../actors/audit/actor.ts"
import { AuditCommandRefused } from "../../actors/audit/errors.ts"
import { auditEvent, type Invocation, PersonErased } from "../../actors/audit/events.ts"
import { keyOf } from "../../actors/kernel.ts"
import { jsonRoundTrip, meta, projectedRows } from "../support/decider.ts"

const at = meta().at

const byKey = {
  invocationId: "inv_1",
  capability: "ask_assistant",
  surface: "api",
  orgId: "org_1",
  workspaceId: "wsp_1",
  principal: { kind: "api_key", apiKeyId: "aky_1", userId: "usr_alice" },
  durationMs: 120,
  units: 1
} as const

const succeeded = auditEvent({ ...byKey, outcome: "succeeded" })
const failed = auditEvent({
  ...byKey,
  invocationId: "inv_2",
  surface: "mcp",
  workspaceId: null,
  principal: { kind: "session", apiKeyId: null, userId: "usr_alice" },
  outcome: "failed",
  errorTag: "Forbidden",
  units: 0
})

describe("audit actor", () => {
  it("accepts no command, on the wire or in process", () => {
    expect(Either.isLeft(Schema.decodeUnknownEither(AuditActor.commands)({ _tag: "CapabilityInvoked" }))).toBe(true)
    const result = AuditActor.decide(AuditActor.initialState, { _tag: "Anything" } as never, meta())
    expect(result).toEqual(Either.left(new AuditCommandRefused()))
  })

  it("pairs a failure with its error tag", () => {
    expect(succeeded.errorTag).toBeUndefined()
    expect(failed.errorTag).toBe("Forbidden")
    // @ts-expect-error a failure needs its tag
    const untagged: Invocation = { ...byKey, outcome: "failed" }
    expect(untagged.outcome).toBe("failed")
  })

  it.each([
    ["a negative duration", { durationMs: -1 }],
    ["fractional units", { units: 0.5 }],
    ["an unknown surface", { surface: "cli" }]
  ])("refuses %s", (_, override) =>
    expect(() => auditEvent({ ...byKey, outcome: "succeeded", ...override } as Invocation)).toThrow())

  it("projects an audit row and a metering row per invocation, at the event's time", () => {
    const rows = (invocationId: string, event: typeof succeeded) =>
      projectedRows(AuditActor, keyOf(AuditActor, invocationId), [[event, at]])
    expect(rows("inv_1", succeeded)).toEqual({
      audit_log: [
        {
          invocation_id: "inv_1",
          at,
          org_id: "org_1",
          workspace_id: "wsp_1",
          capability: "ask_assistant",
          kind: "capability",
          event: null,
          detail: null,
          surface: "api",
          principal_kind: "api_key",
          api_key_id: "aky_1",
          user_id: "usr_alice",
          outcome: "succeeded",
          error_tag: null,
          duration_ms: 120
        }
      ],
      metering: [
        { invocation_id: "inv_1", at, org_id: "org_1", workspace_id: "wsp_1", capability: "ask_assistant", units: 1 }
      ]
    })
    expect(rows("inv_2", failed)).toMatchObject({
      audit_log: [{ invocation_id: "inv_2", workspace_id: null, surface: "mcp", api_key_id: null, outcome: "failed", error_tag: "Forbidden" }],
      metering: [{ invocation_id: "inv_2", workspace_id: null, units: 0 }]
    })
    expect(rows("inv_2", failed)).toEqual(rows("inv_2", failed))
  })

  it("projects append-only rows: a second record of an invocation changes nothing", () => {
    const again = auditEvent({ ...byKey, outcome: "failed", errorTag: "Late" })
    const rows = projectedRows(AuditActor, keyOf(AuditActor, "inv_1"), [[succeeded, at], [again, at]])
    expect(rows.audit_log).toEqual([expect.objectContaining({ outcome: "succeeded", error_tag: null })])
  })

  it("projects an erasure into the audit log of each of the person's organizations", () => {
    const erased = new PersonErased({ erasureId: "era_1", userId: "usr_alice", orgIds: ["org_1", "org_2"], keysDestroyed: 1 })
    const rows = projectedRows(AuditActor, keyOf(AuditActor, "era_1"), [[erased, at]])
    expect(rows.audit_log).toEqual(["org_1", "org_2"].map((orgId) => expect.objectContaining({
      org_id: orgId,
      kind: "security",
      event: "person.erased",
      user_id: "usr_alice",
      detail: { erasureId: "era_1", keysDestroyed: 1 }
    })))
  })

  it.effect("round-trips events through JSON", () =>
    Effect.gen(function* () {
      for (const event of [succeeded, failed, new PersonErased({ erasureId: "era_1", userId: "usr_a", orgIds: ["org_1"], keysDestroyed: 0 })]) expect(yield* jsonRoundTrip(AuditActor.events, event)).toEqual(event)
      expect(yield* jsonRoundTrip(AuditActor.errors, new AuditCommandRefused())).toEqual(new AuditCommandRefused())
    }))
})
