import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { CapabilityListing, type ListingError, ListingDisabledInOrg, ListingExists, ListingNotFound, NotEnabledInWorkspace } from "./errors.ts"
import {
  HealthRecorded,
  ListingDisabled,
  ListingEnabled,
  type ListingEvent,
  ListingInstalled,
  ListingUninstalled,
  OAuthDetected,
  WorkspaceDisabled,
  WorkspaceEnabled
} from "./events.ts"
import type { InstallListing, ListingCommand, RecordHealth, SetWorkspaceEnabled } from "./protocol.ts"
import { type ListingState, type LiveListing, onAllowList } from "./state.ts"

type Decision = Either.Either<ReadonlyArray<ListingEvent>, ListingError>

/** The listing on the allow-list of the command's organization; anything else is not found. */
const listed = (state: ListingState, command: { readonly listingId: string; readonly orgId: string }): Either.Either<LiveListing, ListingError> =>
  onAllowList(state) && state.orgId === command.orgId ? Either.right(state) : Either.left(new ListingNotFound({ listingId: command.listingId }))

const install = (state: ListingState, command: InstallListing, meta: CommandMeta): Decision => {
  // a capability pack is reinstalled idempotently (spec 4.5): its listing is the pack's, whatever asked
  if (onAllowList(state)) return command.source === "svc" ? Either.right([]) : Either.left(new ListingExists({ listingId: command.listingId, name: command.name }))
  const { _tag, ...fields } = command
  return Either.right([new ListingInstalled({ ...fields, at: meta.at })])
}

/** Spec 3.5: only a listing on the allow-list, never a capability pack; enabling needs the organization's enablement too. */
const setWorkspaceEnabled = (state: ListingState, command: SetWorkspaceEnabled, meta: CommandMeta): Decision =>
  Either.flatMap(listed(state, command), (listing): Decision => {
    const { listingId, orgId, workspaceId } = command
    if (listing.pluginType === "capability") return Either.left(new CapabilityListing({ listingId }))
    const current = listing.workspaces[workspaceId]?.enabled ?? false
    if (command.enabled === current) return Either.right([])
    if (command.enabled && !listing.enabled) return Either.left(new ListingDisabledInOrg({ listingId }))
    const event = command.enabled ? new WorkspaceEnabled({ listingId, orgId, workspaceId, at: meta.at }) : new WorkspaceDisabled({ listingId, orgId, workspaceId, at: meta.at })
    return Either.right([event])
  })

/** Spec 6.3.4: OAuth is detected at connect time; a listing of another kind that met an OAuth challenge becomes `oauth`. */
const recordHealth = (state: ListingState, command: RecordHealth, meta: CommandMeta): Decision =>
  Either.flatMap(listed(state, command), (listing): Decision => {
    const { _tag, oauthRequired, ...fields } = command
    if (listing.workspaces[command.workspaceId]?.enabled !== true) {
      return Either.left(new NotEnabledInWorkspace({ listingId: command.listingId, workspaceId: command.workspaceId }))
    }
    const health = new HealthRecorded({ ...fields, at: meta.at })
    if (oauthRequired !== true || listing.authKind === "oauth") return Either.right([health])
    const { listingId, orgId, workspaceId } = command
    return Either.right([new OAuthDetected({ listingId, orgId, workspaceId, at: meta.at }), health])
  })

export const decide = (state: ListingState, command: ListingCommand, meta: CommandMeta): Decision => {
  switch (command._tag) {
    case "InstallListing":
      return install(state, command, meta)
    case "SetListingEnabled":
      return Either.map(listed(state, command), ({ listingId, orgId, enabled }) =>
        enabled === command.enabled ? [] : [command.enabled ? new ListingEnabled({ listingId, orgId, at: meta.at }) : new ListingDisabled({ listingId, orgId, at: meta.at })]
      )
    case "UninstallListing":
      return Either.map(listed(state, command), ({ listingId, orgId }) => [new ListingUninstalled({ listingId, orgId, at: meta.at })])
    case "SetWorkspaceEnabled":
      return setWorkspaceEnabled(state, command, meta)
    case "RecordHealth":
      return recordHealth(state, command, meta)
  }
}
