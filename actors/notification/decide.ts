import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { NotificationExists, NotificationNotFound, type NotificationError } from "./errors.ts"
import { NotificationCreated, NotificationEmailed, NotificationMarked, type NotificationEvent } from "./events.ts"
import type { CreateNotification, MarkNotification, NotificationCommand, RecordEmailed } from "./protocol.ts"
import type { NotificationState } from "./state.ts"

type Decision = Either.Either<ReadonlyArray<NotificationEvent>, NotificationError>

const nothing: Decision = Either.right([])

export const decide = (state: NotificationState, command: NotificationCommand, meta: CommandMeta): Decision => {
  switch (command._tag) {
    case "CreateNotification":
      return create(state, command, meta)
    case "MarkNotification":
      return mark(state, command, meta)
    case "RecordEmailed":
      return recordEmailed(state, command, meta)
  }
}

// Ids of alerts derive from what caused them: creating the notice again (a retried alert) records
// nothing; an id already used for another recipient, or by another actor's notice, is refused.
const create = (state: NotificationState, command: CreateNotification, meta: CommandMeta): Decision => {
  if (state._tag === "Absent") {
    const { _tag, ...fields } = command
    return Either.right([new NotificationCreated({ ...fields, createdAt: meta.at })])
  }
  const same = state.notice !== null && state.userId === command.userId && state.orgId === command.orgId
  return same ? nothing : Either.left(new NotificationExists({ notificationId: command.notificationId }))
}

const after = (state: Extract<NotificationState, { _tag: "Known" }>, mark: MarkNotification["mark"]) =>
  mark === "read" ? !state.unread : mark === "unread" ? state.unread : mark === "archive" ? state.archived : !state.archived

// A mark that changes nothing records nothing. A notice unknown here is another actor's: the
// capability found it in the read model addressed to this person, so its first mark starts it here.
const mark = (state: NotificationState, command: MarkNotification, meta: CommandMeta): Decision => {
  if (state._tag === "Known" && (state.userId !== command.userId || state.orgId !== command.orgId)) {
    return Either.left(new NotificationNotFound({ notificationId: command.notificationId }))
  }
  if (state._tag === "Known" && after(state, command.mark)) return nothing
  const { _tag, ...fields } = command
  return Either.right([new NotificationMarked({ ...fields, at: meta.at })])
}

const recordEmailed = (state: NotificationState, command: RecordEmailed, meta: CommandMeta): Decision => {
  if (state._tag === "Absent" || state.notice === null) return Either.left(new NotificationNotFound({ notificationId: command.notificationId }))
  if (state.emailedAt !== null) return nothing
  return Either.right([new NotificationEmailed({ notificationId: command.notificationId, emailedAt: meta.at })])
}
