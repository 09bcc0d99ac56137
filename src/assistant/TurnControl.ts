/**
 * What reaches a running turn from outside, for the chat routes and A2A alike: an answer to its
 * question and a request to stop. Each is recorded on the conversation actor (which decides
 * whether the person may); the turn, on this process or another, hears the event it causes on
 * its node's tail of the log (TurnRegistry).
 */
import { Effect } from "effect"
import { ConversationActor } from "../../actors/conversation/actor.ts"
import { AnswerQuestion, RequestStop } from "../../actors/conversation/protocol.ts"
import type { CommandMeta } from "../../actors/kernel.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { personSealer } from "../audit/PersonalData.ts"

/** True when the question was waiting for this person and is now answered. The answer goes to the
 * log sealed under the person's key (only the asking person may answer: docs/audit.md). */
export const answerQuestion = (conversationId: string, questionId: string, userId: string, answer: string, meta: CommandMeta) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const sealer = yield* personSealer(userId)
    return yield* host
      .send(ConversationActor, conversationId, new AnswerQuestion({ questionId, userId, answer: sealer.seal(answer) }), meta)
      .pipe(Effect.as(true), Effect.catchTag("QuestionNotFound", () => Effect.succeed(false)))
  })

/** True when a running turn of this person had that turn id and is now asked to stop. */
export const stopTurn = (conversationId: string, turnId: string, userId: string, meta: CommandMeta) =>
  Effect.flatMap(ActorHost, (host) =>
    host
      .send(ConversationActor, conversationId, new RequestStop({ turnId, userId }), meta)
      .pipe(Effect.as(true), Effect.catchTag("TurnNotFound", () => Effect.succeed(false)))
  )
