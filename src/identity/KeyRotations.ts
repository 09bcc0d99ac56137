/**
 * Completing API key rotations (spec 3.3). A rotation puts the old key into grace and issues its
 * successor: two keys, so two actors in two partitions, whose events cannot be one append. The old
 * key's `api_key.rotated` is therefore the durable intent: it records the successor's secret and
 * creator, from which, with the old key's own fields, the successor's creation follows
 * (`successorOf`). The rotating request sends it at once; should its process die between the two
 * appends, a sweep on every node finds rotated keys whose successor has no row and sends it. Both
 * send the same command under the same command id, so the successor is created once, whoever
 * gets there first.
 */
import { Clock, Effect, Layer, Schedule } from "effect"
import { ApiKeyActor } from "../../actors/apikey/actor.ts"
import { successorOf } from "../../actors/apikey/decide.ts"
import type { CreateApiKey } from "../../actors/apikey/protocol.ts"
import type { ApiKeyState } from "../../actors/apikey/state.ts"
import type { CommandMeta } from "../../actors/kernel.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { decodeState } from "../../streams/Projector.ts"
import { rotatedKeysWithoutSuccessor } from "./Queries.ts"

/** How often the sweep looks for rotations left without their successor. */
const SWEEP_MS = 5_000
/** Rotations completed per sweep; the rest wait for the next. */
const SWEEP_LIMIT = 100

/** Sends the successor's creation to its own key, under one command id whoever sends it. */
export const issueSuccessor = (successor: CreateApiKey, meta: Omit<CommandMeta, "commandId">) =>
  Effect.flatMap(ActorHost, (host) =>
    host.send(ApiKeyActor, successor.keyId, successor, { ...meta, commandId: `rotation_successor_${successor.keyId}` })
  )

/** The successors of rotated keys (in grace, or revoked since) that have no row of their own; a
 * rotation recorded without its successor (before the intent was carried) cannot be completed. */
const missingSuccessors = Effect.gen(function* () {
  const states = yield* rotatedKeysWithoutSuccessor(SWEEP_LIMIT)
  return states.flatMap((state) => successorOf(decodeState(ApiKeyActor, state) as ApiKeyState) ?? [])
})

const sweep = Effect.gen(function* () {
  const at = new Date(yield* Clock.currentTimeMillis).toISOString()
  for (const successor of yield* missingSuccessors) {
    yield* issueSuccessor(successor, { at, actor: "system" }).pipe(
      Effect.catchAll((error) => Effect.logError(`key rotation: issuing ${successor.keyId} failed`, error))
    )
  }
})

/** Runs the sweep on the node's clock from its start, every few seconds. */
export const layer = Layer.scopedDiscard(
  Effect.forkScoped(
    Effect.repeat(
      sweep.pipe(Effect.catchAllCause((cause) => Effect.logError("key rotation: sweep failed", cause))),
      Schedule.spaced(SWEEP_MS)
    )
  )
)
