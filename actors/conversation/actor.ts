/** The conversation actor, key `conversation:<conversationId UUID>`: a chat conversation, its
 * messages, and its runs, approvals and questions (docs/chat.md). */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { ConversationError } from "./errors.ts"
import { ConversationEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { ConversationCommand } from "./protocol.ts"
import { ConversationState, initialConversationState } from "./state.ts"

export const ConversationActor: ActorKind<ConversationState, ConversationCommand, ConversationEvent, ConversationError> = {
  kind: "conversation",
  initialState: initialConversationState,
  state: ConversationState,
  commands: ConversationCommand,
  events: ConversationEvent,
  errors: ConversationError,
  decide,
  evolve,
  project
}
