import { describe, expect, it } from "@effect/vitest"
import { McpAuthAlertsActor } from "../../actors/authalerts/actor.ts"
import { McpAuthAlertsSet } from "../../actors/authalerts/events.ts"
import { SetMcpAuthAlerts } from "../../actors/authalerts/protocol.ts"
import { NotificationActor } from "../../actors/notification/actor.ts"
import { NotificationExists, NotificationNotFound } from "../../actors/notification/errors.ts"
import { NotificationCreated, NotificationEmailed, NotificationMarked } from "../../actors/notification/events.ts"
import { CreateNotification, MarkNotification, RecordEmailed } from "../../actors/notification/protocol.ts"
import { meta, projectedRows, spec } from "../support/decider.ts"

const T0 = "2024-05-01T10:00:00.000Z"
const T1 = "2024-05-01T11:00:00.000Z"
const T2 = "2024-05-01T12:00:00.000Z"

const notice = {
  notificationId: "ntf_1",
  orgId: "org_1",
  workspaceId: "wsp_1",
  userId: "usr_owner",
  kind: "system" as const,
  title: "Linear needs you to sign in again",
  body: "Its credential stopped working.",
  deepLink: "/acme/main/settings/integrations/reauth/porg_1",
  subject: { listingId: "porg_1" }
}
const created = new NotificationCreated({ ...notice, createdAt: T0 })
const mark = (m: "read" | "unread" | "archive" | "unarchive", userId = "usr_owner") =>
  new MarkNotification({ notificationId: "ntf_1", orgId: "org_1", userId, mark: m })
const marked = (m: "read" | "unread" | "archive" | "unarchive", at = T0) =>
  new NotificationMarked({ notificationId: "ntf_1", orgId: "org_1", userId: "usr_owner", mark: m, at })

describe("notification decider", () => {
  it("creates a notice once; the same again records nothing; another recipient under its id is refused", () => {
    spec(NotificationActor).given([]).when(new CreateNotification(notice), meta({ at: T0 })).then([created])
    spec(NotificationActor).given([created]).when(new CreateNotification(notice)).thenNothingHappened()
    spec(NotificationActor).given([created]).when(new CreateNotification({ ...notice, userId: "usr_admin" }))
      .thenThrows(new NotificationExists({ notificationId: "ntf_1" }))
    // an id a run's notice already uses (marked here) is not taken over
    spec(NotificationActor).given([marked("read")]).when(new CreateNotification(notice)).thenThrows("NotificationExists")
  })

  it("marks read, unread, archived and back; a mark that changes nothing records nothing", () => {
    spec(NotificationActor).given([created]).when(mark("read"), meta({ at: T1 })).then([marked("read", T1)])
    spec(NotificationActor).given([created]).when(mark("unread")).thenNothingHappened()
    spec(NotificationActor).given([created, marked("read")]).when(mark("read")).thenNothingHappened()
    spec(NotificationActor).given([created, marked("read")]).when(mark("unread"), meta({ at: T1 })).then([marked("unread", T1)])
    spec(NotificationActor).given([created]).when(mark("archive"), meta({ at: T1 })).then([marked("archive", T1)])
    spec(NotificationActor).given([created, marked("archive")]).when(mark("archive")).thenNothingHappened()
    spec(NotificationActor).given([created, marked("archive")]).when(mark("unarchive"), meta({ at: T1 })).then([marked("unarchive", T1)])
  })

  it("marks only the recipient's notice", () => {
    spec(NotificationActor).given([created]).when(mark("read", "usr_other")).thenThrows(new NotificationNotFound({ notificationId: "ntf_1" }))
    spec(NotificationActor).given([created]).when(new MarkNotification({ notificationId: "ntf_1", orgId: "org_2", userId: "usr_owner", mark: "read" }))
      .thenThrows("NotificationNotFound")
  })

  it("starts tracking marks of another actor's notice (a run's) at its first mark", () => {
    spec(NotificationActor).given([]).when(mark("read"), meta({ at: T1 })).then([marked("read", T1)])
  })

  it("records the email once, and only of its own notices", () => {
    spec(NotificationActor).given([created]).when(new RecordEmailed({ notificationId: "ntf_1" }), meta({ at: T1 }))
      .then([new NotificationEmailed({ notificationId: "ntf_1", emailedAt: T1 })])
    spec(NotificationActor).given([created, new NotificationEmailed({ notificationId: "ntf_1", emailedAt: T1 })])
      .when(new RecordEmailed({ notificationId: "ntf_1" })).thenNothingHappened()
    spec(NotificationActor).given([]).when(new RecordEmailed({ notificationId: "ntf_1" })).thenThrows("NotificationNotFound")
    spec(NotificationActor).given([marked("read")]).when(new RecordEmailed({ notificationId: "ntf_1" })).thenThrows("NotificationNotFound")
  })
})

describe("notification projection", () => {
  it("writes the notice with its deep link and email time, and the marks apart", () => {
    const rows = projectedRows(NotificationActor, "notification:ntf_1", [
      [created, T0],
      [new NotificationEmailed({ notificationId: "ntf_1", emailedAt: T1 }), T1],
      [marked("read", T2), T2],
      [marked("archive", T2), T2]
    ])
    expect(rows.notifications).toEqual([{
      notification_id: "ntf_1",
      org_id: "org_1",
      workspace_id: "wsp_1",
      user_id: "usr_owner",
      kind: "system",
      title: notice.title,
      body: notice.body,
      subject: { listingId: "porg_1" },
      created_at: T0,
      resolved_at: null,
      deep_link: notice.deepLink,
      emailed_at: T1
    }])
    expect(rows.notification_marks).toEqual([{ notification_id: "ntf_1", user_id: "usr_owner", unread: false, archived: true, marked_at: T2 }])
  })

  it("writes only the marks of another actor's notice", () => {
    const rows = projectedRows(NotificationActor, "notification:arn_1:0:1", [[marked("read", T1), T1]])
    expect(rows.notifications).toBeUndefined()
    expect(rows.notification_marks).toEqual([{ notification_id: "ntf_1", user_id: "usr_owner", unread: false, archived: false, marked_at: T1 }])
  })
})

describe("mcp_auth_alerts decider", () => {
  const set = (sendEmail: boolean, roles: ReadonlyArray<"Owner" | "Admin" | "Member" | "Viewer">) => new SetMcpAuthAlerts({ orgId: "org_1", sendEmail, roles })

  it("records a change, the roles once each in a fixed order; the same again records nothing", () => {
    spec(McpAuthAlertsActor).given([]).when(set(false, ["Viewer", "Owner", "Owner"]), meta({ at: T0 }))
      .then([new McpAuthAlertsSet({ orgId: "org_1", sendEmail: false, roles: ["Owner", "Viewer"], at: T0 })])
    const history = [new McpAuthAlertsSet({ orgId: "org_1", sendEmail: false, roles: ["Owner", "Viewer"], at: T0 })]
    spec(McpAuthAlertsActor).given(history).when(set(false, ["Viewer", "Owner"])).thenNothingHappened()
    spec(McpAuthAlertsActor).given(history).when(set(true, ["Owner", "Viewer"]), meta({ at: T1 }))
      .then([new McpAuthAlertsSet({ orgId: "org_1", sendEmail: true, roles: ["Owner", "Viewer"], at: T1 })])
  })

  it("refuses alerting nobody", () => {
    spec(McpAuthAlertsActor).given([]).when(set(true, [])).thenThrows("NoAlertRoles")
  })

  it("projects one row per organization", () => {
    const rows = projectedRows(McpAuthAlertsActor, "mcp_auth_alerts:org_1", [[new McpAuthAlertsSet({ orgId: "org_1", sendEmail: true, roles: ["Admin"], at: T0 }), T0]])
    expect(rows.mcp_auth_alerts).toEqual([{ org_id: "org_1", send_email: true, roles: ["Admin"], updated_at: T0 }])
  })
})
