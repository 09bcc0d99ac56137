/**
 * What a turn records on its conversation actor: every change of the run's state (started, a call
 * parked, a question asked or closed, ended) is a command, stamped with the node's clock and the
 * turn's caller.
 */
import { Clock, Effect } from "effect"
import { randomUUID } from "node:crypto"
import { ConversationActor } from "../../actors/conversation/actor.ts"
import type { ConversationCommand } from "../../actors/conversation/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import type { TurnFailure } from "./ChatEvents.ts"

/** Spec 7.2: the message of a failure with no stable code (which carries no code). */
export const STREAM_ERROR = "Stream error"

export const failure = (code: string | null, message: string, reason: string | null = null): TurnFailure => ({ code, reason, message })

/** Records one command on the turn's conversation; `commandId` names it when a retry must record it once. */
export type TurnRecorder = (command: ConversationCommand, commandId?: string) => Effect.Effect<unknown, unknown>

export const turnRecorder = (conversationId: string, actor: string) =>
  Effect.map(ActorHost, (host): TurnRecorder => (command, commandId = randomUUID()) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      host.send(ConversationActor, conversationId, command, { commandId, at: new Date(now).toISOString(), actor })
    )
  )

/** 7.2's answer when the run could not be recorded as started. */
export const startFailure = (error: unknown, turn: { readonly conversationRef: string | null; readonly turnId: string | null }): TurnFailure => {
  const tag = (error as { _tag?: string })._tag
  if (tag === "ConversationNotFound") return failure("conversation_not_found", `no conversation ${turn.conversationRef} in this workspace`)
  if (tag === "TurnIdInUse") {
    return failure("assistant_run_not_recorded", `a turn with id ${turn.turnId} is still running in this conversation; nothing was answered`, "turn_id_in_use")
  }
  return failure("assistant_run_not_recorded", "the turn could not be recorded as a run; nothing was answered")
}
