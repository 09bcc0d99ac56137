import type { NotificationEvent } from "./events.ts"
import type { NotificationState } from "./state.ts"

export const evolve = (state: NotificationState, event: NotificationEvent): NotificationState => {
  switch (event._tag) {
    case "notification.created": {
      const { _tag, notificationId, orgId, userId, ...notice } = event
      return { _tag: "Known", notificationId, orgId, userId, notice, unread: true, archived: false, markedAt: null, emailedAt: null }
    }
    case "notification.marked": {
      const known = state._tag === "Known"
        ? state
        : { _tag: "Known" as const, notificationId: event.notificationId, orgId: event.orgId, userId: event.userId, notice: null, unread: true, archived: false, markedAt: null, emailedAt: null }
      return {
        ...known,
        unread: event.mark === "read" ? false : event.mark === "unread" ? true : known.unread,
        archived: event.mark === "archive" ? true : event.mark === "unarchive" ? false : known.archived,
        markedAt: event.at
      }
    }
    case "notification.emailed": {
      // the decider records an email only for a notice created here; a log that says otherwise is corrupt
      if (state._tag !== "Known") throw new Error(`notification.emailed for ${event.notificationId} in state ${state._tag}`)
      return { ...state, emailedAt: event.emailedAt }
    }
  }
}
