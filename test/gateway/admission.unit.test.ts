/**
 * How the gateway states the node's refusals for load (docs/decisions.md, "Admission control"): a
 * turn or a stream past a bound is 503 `engine_unavailable` naming the bound, with `Retry-After`
 * and no cause on the request line (nothing failed); a command past the queued-commands bound, as
 * the checkpoint answers it, is 503 `unavailable`, reason `queued_commands`, with `Retry-After`.
 */
import { Cause, Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { replyForFailure } from "../../gateway/errors.ts"
import { orOwnerUnreachable } from "../../src/platform/Failures.ts"
import { Overloaded, unavailableOf } from "../../src/platform/Errors.ts"
import { HostUnavailable } from "../../streams/ActorHost.ts"

describe("refusals for load", () => {
  it("a turn or a stream past a bound: 503 engine_unavailable with Retry-After, the bound as reason, no cause logged", () => {
    for (const [bound, seconds] of [["turns_starting", 1], ["turns_running", 5], ["open_streams", 5]] as const) {
      const reply = replyForFailure(Cause.fail(new Overloaded({ bound, retryAfterSeconds: seconds })))
      expect(reply).toMatchObject({ status: 503, headers: { "retry-after": String(seconds) }, json: { error: { code: "engine_unavailable", reason: bound } } })
      expect(reply.failure).toBeUndefined()
    }
  })

  it("a command past the queued-commands bound, as the checkpoint answers it: 503 unavailable, reason queued_commands, Retry-After", () => {
    const refused = Effect.runSyncExit(orOwnerUnreachable(Effect.fail(new HostUnavailable({ reason: "overloaded", message: "full" }))))
    if (!Exit.isFailure(refused)) throw new Error("not refused")
    expect(replyForFailure(refused.cause)).toMatchObject({ status: 503, headers: { "retry-after": "1" }, json: { error: { code: "unavailable", reason: "queued_commands" } } })
    // the host's own failure, unmapped, says the same; an owner out of reach is still owner_unreachable
    expect(replyForFailure(Cause.fail(new HostUnavailable({ reason: "overloaded", message: "full" })))).toMatchObject({ status: 503, json: { error: { reason: "queued_commands" } } })
    expect(replyForFailure(Cause.fail(unavailableOf(new HostUnavailable({ reason: "timeout", message: "late" }))))).toMatchObject({ status: 503, json: { error: { code: "unavailable", reason: "owner_unreachable" } } })
  })
})
