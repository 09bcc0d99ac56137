/**
 * A person's in-app notices in an organization (spec 2.9, 4.5): a `human_input` step waiting for
 * them (kind `run`), an automation of theirs a change disabled (kind `security`), a plugin credential
 * needing re-authentication (kind `system`), newest first.
 * Only a person reads and marks them: they are addressed to one. And the organization's
 * `mcp_auth_alerts` setting, which decides who hears of a credential needing re-authentication.
 */
import { Effect } from "effect"
import { McpAuthAlertsActor } from "../../actors/authalerts/actor.ts"
import { SetMcpAuthAlerts } from "../../actors/authalerts/protocol.ts"
import { NotificationActor } from "../../actors/notification/actor.ts"
import { NotificationNotFound } from "../../actors/notification/errors.ts"
import { MarkNotification } from "../../actors/notification/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { slugsOf } from "../identity/Auth.ts"
import { type AnyCapability, implement } from "../checkpoint/Capability.ts"
import { mcpAuthAlertsOf } from "../marketplace/Notify.ts"
import { keysetPage, TimeIdCursor, timeId } from "../platform/Paging.ts"
import { ownRecord } from "../checkpoint/Person.ts"
import { personalOpener, sealedWithin } from "../audit/PersonalData.ts"
import * as Api from "./Api.ts"
import { type NotificationRow, notificationOwner, notificationsAfter, unreadNotificationCount } from "./Queries.ts"

const iso = (value: Date | null) => (value === null ? null : value.toISOString())

/** An automation's or a run's notice is projected by its actor, which knows no slugs: its route (the
 * run's, else the automation's) is made when it is read. */
const deepLinkOf = (r: NotificationRow) => {
  const subject = r.subject as Record<string, any> | null
  return r.deepLink !== null
    ? Effect.succeed(r.deepLink)
    : typeof subject?.automationId === "string" && r.workspaceId !== null
      ? Effect.map(slugsOf(r.orgId, r.workspaceId), (place) =>
          `/${place}/automations/${subject.automationId}${typeof subject.runId === "string" ? `/runs/${subject.runId}` : ""}`)
      : Effect.succeed(null)
}

export const listNotifications = implement(Api.listNotifications, (invocation, input) =>
  Effect.gen(function* () {
    const orgId = invocation.orgId!
    const person = invocation.principal.attributedTo
    const filter = { all: input.all === true, archived: input.archived === true, unread: input.unread === true }
    const read = (after: readonly [string, string] | undefined, rows: number) => notificationsAfter(orgId, person, filter, after, rows)
    const { page, nextCursor } = yield* keysetPage(TimeIdCursor, input, read, (last) => timeId(last.createdAt, last.notificationId))
    const count = yield* unreadNotificationCount(orgId, person)
    const links = yield* Effect.forEach(page, deepLinkOf)
    // a run's question, or the input of a call it parked, is sealed under its person's key (docs/audit.md): opened, left out once erased
    const open = yield* personalOpener(page.flatMap((r) => sealedWithin(r.body)))
    return {
      nextCursor,
      unreadCount: count,
      notifications: page.map((r, i) => ({
        notificationId: r.notificationId,
        kind: r.kind,
        workspaceId: r.workspaceId,
        title: r.title,
        body: open.within(r.body),
        subject: r.subject,
        deepLink: links[i],
        unread: r.unread,
        archived: r.archived,
        emailedAt: iso(r.emailedAt),
        createdAt: iso(r.createdAt),
        resolvedAt: iso(r.resolvedAt)
      }))
    }
  })
)

export const markNotification = implement(Api.markNotification, (invocation, input) =>
  Effect.gen(function* () {
    const orgId = invocation.orgId!
    // only one's own: another person's notice is as absent as one that never was
    const { userId } = yield* ownRecord(
      invocation,
      notificationOwner(input.notificationId, orgId),
      () => new NotificationNotFound({ notificationId: input.notificationId })
    )
    const { state } = yield* (yield* ActorHost).send(
      NotificationActor,
      input.notificationId,
      new MarkNotification({ notificationId: input.notificationId, orgId, userId, mark: input.mark }),
      invocation.meta
    )
    if (state._tag !== "Known") return yield* Effect.dieMessage("MarkNotification succeeded on an absent notification")
    return { notificationId: input.notificationId, unread: state.unread, archived: state.archived }
  })
)

export const getMcpAuthAlerts = implement(Api.getMcpAuthAlerts, (invocation) => mcpAuthAlertsOf(invocation.orgId!))

export const setMcpAuthAlerts = implement(Api.setMcpAuthAlerts, (invocation, input) =>
  Effect.gen(function* () {
    const orgId = invocation.orgId!
    const { state } = yield* (yield* ActorHost).send(McpAuthAlertsActor, orgId, new SetMcpAuthAlerts({ orgId, ...input }), invocation.meta)
    if (state._tag !== "Set") return yield* Effect.dieMessage("SetMcpAuthAlerts left the setting unset")
    return { sendEmail: state.sendEmail, roles: state.roles }
  })
)

export const notificationCapabilities: ReadonlyArray<AnyCapability> = [listNotifications, markNotification, getMcpAuthAlerts, setMcpAuthAlerts]
