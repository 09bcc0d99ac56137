/**
 * `run.replay`: one of the organization's recorded turns re-run against its tape under this
 * build's code (src/assistant/TurnReplay.ts, docs/audit.md "Replaying a turn"), for an Owner.
 */
import { Effect } from "effect"
import { loadRecordedTurn, replayTurn } from "../assistant/TurnReplay.ts"
import { type AnyCapability, implement } from "../checkpoint/Capability.ts"
import { BadRequest, NotFound } from "../platform/Errors.ts"
import * as Api from "./Api.ts"

export const replayRun = implement(Api.replayRun, (invocation, input) =>
  Effect.gen(function* () {
    const recorded = yield* loadRecordedTurn(input.runId, invocation.orgId!)
    if ("_tag" in recorded) {
      if (recorded._tag === "RunNotFound") return yield* new NotFound({ reason: "run_not_found", message: `no turn ${input.runId} in this organization` })
      return yield* new BadRequest(
        recorded._tag === "RunNotEnded" ? { reason: "run_not_ended", message: "only an ended turn is replayed" }
        : recorded._tag === "Erased" ? { reason: "run_erased", message: "the turn's person was erased: its tape cannot be opened" }
        : { reason: "run_without_tape", message: "the turn was recorded before turns were taped" }
      )
    }
    const verdict = yield* replayTurn(recorded)
    return verdict.identical
      ? { identical: true, modelCalls: verdict.modelCalls, toolCalls: verdict.toolCalls, events: verdict.events, divergence: null }
      : { identical: false, modelCalls: null, toolCalls: null, events: null, divergence: verdict.divergence }
  })
)

export const runReplayCapabilities: ReadonlyArray<AnyCapability> = [replayRun]
