/**
 * Re-authentication alerts (spec 6.3.5): when a plugin credential becomes `needs_reauth`, each
 * organization member whose role is in the organization's `mcp_auth_alerts.roles` gets an in-app
 * notice (kind `system`) with the re-authentication route, and, when `send_email` is on, its email
 * mirror. The notice is made first and stands whatever happens to the email; `emailed_at` is set
 * only once the mail server accepted the message.
 */
import { createHash, randomUUID } from "node:crypto"
import { Clock, Effect } from "effect"
import { type AlertRole, DEFAULT_MCP_AUTH_ALERTS } from "../../actors/authalerts/events.ts"
import type { CommandMeta } from "../../actors/kernel.ts"
import { NotificationActor } from "../../actors/notification/actor.ts"
import { CreateNotification, RecordEmailed } from "../../actors/notification/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { newPublicId } from "../identity/ApiKeyToken.ts"
import { PublicUrl } from "../identity/Organization.ts"
import { Mailer } from "../platform/Mail.ts"
import { membersHolding, readMcpAuthAlerts } from "./Queries.ts"

export interface McpAuthAlerts {
  readonly sendEmail: boolean
  readonly roles: ReadonlyArray<AlertRole>
}

/** The organization's setting, or spec 2.9's default (email on, Owner and Admin) until an Owner sets it. */
export const mcpAuthAlertsOf = (orgId: string) =>
  Effect.map(readMcpAuthAlerts(orgId), (set) => (set === undefined ? DEFAULT_MCP_AUTH_ALERTS : (set satisfies McpAuthAlerts)))

export interface Recipient {
  readonly userId: string
  readonly email: string
  /** The workspace whose pages the notice leads to: the credential's, or for a shared one a workspace of the recipient's; null in an organization without any. */
  readonly workspaceSlug: string | null
}

/**
 * Members of the organization holding one of `roles`: `Owner` is the organization's role;
 * `Admin`, `Member` and `Viewer` are workspace roles, in the credential's workspace (in any of the
 * organization's workspaces for an organization-wide credential, `workspaceId` null).
 */
export const recipientsOf = (orgId: string, workspaceId: string | null, roles: ReadonlyArray<AlertRole>) =>
  Effect.gen(function* () {
    const owners = roles.includes("Owner")
    const workspaceRoles = roles.filter((role) => role !== "Owner").map((role) => role.toLowerCase())
    const members: ReadonlyArray<Recipient> = yield* membersHolding(orgId, workspaceId, owners, workspaceRoles)
    return members
  })

export interface ReauthAlert {
  readonly orgId: string
  /** Null for an organization's shared credential (its page is in each recipient's own workspace). */
  readonly workspaceId: string | null
  /** The org listing's public id (`porg_...`): the last segment of the re-authentication route. */
  readonly listingId: string
  readonly listingName: string
  readonly orgSlug: string
  /**
   * What caused the alert (e.g. the credential's id and the time it became `needs_reauth`): the
   * notices' ids derive from it, so calling again for the same cause notifies and emails nobody twice.
   * Unset: every call notifies anew.
   */
  readonly causeId?: string
}

export interface ReauthNotice {
  readonly notificationId: string
  readonly userId: string
  /** ISO 8601 when the email mirror was accepted; null when none was sent or it failed. */
  readonly emailedAt: string | null
}

/**
 * Spec 4.5's re-authentication page: `/{orgSlug}/{workspaceSlug}/settings/integrations/reauth/{listing}`,
 * which shows the workspace's own credential and the organization's shared one. Without a
 * workspace to open it in, the app's home.
 */
export const reauthDeepLink = (orgSlug: string, workspaceSlug: string | null, listingId: string) =>
  workspaceSlug === null ? "/" : `/${encodeURIComponent(orgSlug)}/${encodeURIComponent(workspaceSlug)}/settings/integrations/reauth/${encodeURIComponent(listingId)}`

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

const noticeId = (alert: ReauthAlert, userId: string) =>
  alert.causeId === undefined ? newPublicId("ntf") : `ntf_${createHash("sha256").update(`${alert.causeId}\n${userId}`).digest("hex").slice(0, 32)}`

const systemMeta = (commandId: string) =>
  Effect.map(Clock.currentTimeMillis, (now): CommandMeta => ({ commandId, at: new Date(now).toISOString(), actor: "system" }))

/**
 * Notifies the members `mcp_auth_alerts` names that a credential of `listingName` needs
 * re-authentication; what each got. Fails only when a notice could not be made (the database or
 * the log not answering); a failed email is logged and leaves `emailedAt` null.
 */
export const notifyReauth = (alert: ReauthAlert) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const mailer = yield* Mailer
    const publicUrl = yield* PublicUrl
    const settings = yield* mcpAuthAlertsOf(alert.orgId)
    const recipients = yield* recipientsOf(alert.orgId, alert.workspaceId, settings.roles)
    const title = `${alert.listingName} needs you to sign in again`
    const notify = (recipient: Recipient) =>
      Effect.gen(function* () {
        const deepLink = reauthDeepLink(alert.orgSlug, recipient.workspaceSlug, alert.listingId)
        const link = new URL(deepLink, publicUrl).href
        const body =
          alert.workspaceId === null
            ? `The organization ${alert.orgSlug}'s shared connection to ${alert.listingName} stopped working: its credential could not be refreshed, so workspaces without their own connection cannot use it. Re-authenticate to restore it.`
            : `The connection to ${alert.listingName} in ${alert.orgSlug}/${recipient.workspaceSlug} stopped working: its credential could not be refreshed. Re-authenticate to restore it.`
        const notificationId = noticeId(alert, recipient.userId)
        const stable = alert.causeId !== undefined
        const { state } = yield* host.send(
          NotificationActor,
          notificationId,
          new CreateNotification({
            notificationId,
            orgId: alert.orgId,
            workspaceId: alert.workspaceId,
            userId: recipient.userId,
            kind: "system",
            title,
            body,
            deepLink,
            subject: { listingId: alert.listingId, listingName: alert.listingName }
          }),
          yield* systemMeta(stable ? `${notificationId}:create` : randomUUID())
        )
        const emailedBefore = state._tag === "Known" ? state.emailedAt : null
        if (!settings.sendEmail || emailedBefore !== null) return { notificationId, userId: recipient.userId, emailedAt: emailedBefore }
        const sent = yield* mailer.send({
          to: recipient.email,
          subject: title,
          text: `${body}\n\nRe-authenticate: ${link}\n`,
          html: `<p>${escapeHtml(body)}</p><p><a href="${escapeHtml(link)}">Re-authenticate ${escapeHtml(alert.listingName)}</a></p>`
        }).pipe(
          Effect.as(true),
          Effect.catchAll((failure) =>
            Effect.logWarning("notifications: the email mirror of a re-authentication notice was not sent").pipe(
              Effect.annotateLogs({ notificationId, reason: failure.reason, error: failure.message }),
              Effect.as(false)
            )
          )
        )
        if (!sent) return { notificationId, userId: recipient.userId, emailedAt: null }
        const recorded = yield* host.send(NotificationActor, notificationId, new RecordEmailed({ notificationId }), yield* systemMeta(`${notificationId}:emailed:${randomUUID()}`))
        return { notificationId, userId: recipient.userId, emailedAt: recorded.state._tag === "Known" ? recorded.state.emailedAt : null }
      })
    return yield* Effect.forEach(recipients, notify, { concurrency: 4 })
  }).pipe(Effect.withSpan("Notify.notifyReauth", { attributes: { orgId: alert.orgId, listingId: alert.listingId }, captureStackTrace: false }))
