/** The notification actor, key `notification:<notificationId>`: one in-app notice, its recipient's
 * marks (read, archived) and its email mirror. */
import type { ActorKind } from "../kernel.ts"
import { decide } from "./decide.ts"
import { NotificationError } from "./errors.ts"
import { NotificationEvent } from "./events.ts"
import { evolve } from "./evolve.ts"
import { project } from "./project.ts"
import { NotificationCommand } from "./protocol.ts"
import { initialNotificationState, NotificationState } from "./state.ts"

export const NotificationActor: ActorKind<NotificationState, NotificationCommand, NotificationEvent, NotificationError> = {
  kind: "notification",
  initialState: initialNotificationState,
  state: NotificationState,
  commands: NotificationCommand,
  events: NotificationEvent,
  errors: NotificationError,
  decide,
  evolve,
  project
}
