import { describe, expect, it } from "vitest"
import { ListingActor } from "../../actors/listing/actor.ts"
import {
  HealthRecorded,
  ListingDisabled,
  ListingEnabled,
  ListingInstalled,
  ListingUninstalled,
  OAuthDetected,
  WorkspaceDisabled,
  WorkspaceEnabled
} from "../../actors/listing/events.ts"
import { InstallListing, RecordHealth, SetListingEnabled, SetWorkspaceEnabled, UninstallListing } from "../../actors/listing/protocol.ts"
import { evolve } from "../../actors/listing/evolve.ts"
import { initialListingState } from "../../actors/listing/state.ts"
import { meta, spec } from "../support/decider.ts"

const at = meta().at
const target = { listingId: "porg_1", orgId: "org_1" }
const definition = {
  orgId: "org_1",
  pluginType: "mcp_server" as const,
  catalogServerId: null,
  source: "custom" as const,
  name: "com.example/files",
  title: "Files",
  description: "",
  iconUrl: null,
  endpointUrl: "https://files.example.com/mcp",
  transport: "streamable-http" as const,
  authKind: "none" as const,
  authConfig: {},
  config: {}
}
const install = new InstallListing({ listingId: "porg_1", ...definition })
const installed = new ListingInstalled({ listingId: "porg_1", ...definition, at })
const enabled = new ListingEnabled({ ...target, at })
const uninstalled = new ListingUninstalled({ ...target, at })
const wsEnabled = new WorkspaceEnabled({ ...target, workspaceId: "ws_1", at })

describe("org listing (spec 3.5)", () => {
  const listing = spec(ListingActor)

  it("an install adds the listing, disabled", () => listing.given([]).when(install).then([installed]))
  it("a second install of the name is refused", () => listing.given([installed]).when(install).thenThrows("ListingExists"))
  it("a capability pack installed again changes nothing (idempotent)", () => {
    const pack = { ...definition, pluginType: "capability" as const, source: "svc" as const, name: "svc/documents", endpointUrl: null, transport: null }
    listing.given([new ListingInstalled({ listingId: "porg_1", ...pack, at }), enabled]).when(new InstallListing({ listingId: "porg_1", ...pack })).thenNothingHappened()
  })
  it("an install after an uninstall revives the name", () => listing.given([installed, uninstalled]).when(install).then([installed]))

  it("set_enabled enables and disables; the same state again changes nothing", () => {
    listing.given([installed]).when(new SetListingEnabled({ ...target, enabled: true })).then([enabled])
    listing.given([installed, enabled]).when(new SetListingEnabled({ ...target, enabled: false })).then([new ListingDisabled({ ...target, at })])
    listing.given([installed, enabled]).when(new SetListingEnabled({ ...target, enabled: true })).thenNothingHappened()
  })

  it("another organization's command finds nothing", () =>
    listing.given([installed]).when(new SetListingEnabled({ listingId: "porg_1", orgId: "org_2", enabled: true })).thenThrows("ListingNotFound"))

  it("uninstall is a soft delete; an uninstalled listing is not found", () => {
    listing.given([installed]).when(new UninstallListing(target)).then([uninstalled])
    listing.given([installed, uninstalled]).when(new UninstallListing(target)).thenThrows("ListingNotFound")
    listing.given([installed, uninstalled]).when(new SetListingEnabled({ ...target, enabled: true })).thenThrows("ListingNotFound")
  })
})

describe("workspace install (spec 3.5)", () => {
  const listing = spec(ListingActor)
  const enableIn = new SetWorkspaceEnabled({ ...target, workspaceId: "ws_1", enabled: true })

  it("a workspace enables a listing its organization enabled", () => listing.given([installed, enabled]).when(enableIn).then([wsEnabled]))
  it("not while the organization has it disabled", () => listing.given([installed]).when(enableIn).thenThrows("ListingDisabledInOrg"))
  it("not once it left the allow-list", () => listing.given([installed, enabled, uninstalled]).when(enableIn).thenThrows("ListingNotFound"))
  it("never a capability listing", () => {
    const pack = { ...definition, pluginType: "capability" as const, source: "svc" as const, name: "svc/documents" }
    listing.given([new ListingInstalled({ listingId: "porg_1", ...pack, at }), enabled]).when(enableIn).thenThrows("CapabilityListing")
  })
  it("disabling is always allowed, and twice changes nothing", () => {
    const disable = new SetWorkspaceEnabled({ ...target, workspaceId: "ws_1", enabled: false })
    listing.given([installed, enabled, wsEnabled]).when(disable).then([new WorkspaceDisabled({ ...target, workspaceId: "ws_1", at })])
    listing.given([installed, enabled]).when(disable).thenNothingHappened()
  })
  it("health is recorded for a workspace that enabled it only", () => {
    const health = new RecordHealth({ ...target, workspaceId: "ws_1", status: "healthy", error: null, tools: ["echo"] })
    listing.given([installed, enabled, wsEnabled]).when(health).then([new HealthRecorded({ ...target, workspaceId: "ws_1", status: "healthy", error: null, tools: ["echo"], at })])
    listing.given([installed, enabled]).when(health).thenThrows("NotEnabledInWorkspace")
  })
})

describe("OAuth detected at connect time (spec 6.3.4)", () => {
  const listing = spec(ListingActor)
  const challenged = new RecordHealth({ ...target, workspaceId: "ws_1", status: "unhealthy", error: "oauth_required", tools: [], oauthRequired: true })
  const health = new HealthRecorded({ ...target, workspaceId: "ws_1", status: "unhealthy", error: "oauth_required", tools: [], at })
  const detected = new OAuthDetected({ ...target, workspaceId: "ws_1", at })
  const secretListing = new ListingInstalled({ listingId: "porg_1", ...definition, authKind: "secret", authConfig: { header: "X-Api-Key", valuePrefix: "" }, at })
  const oauthListing = new ListingInstalled({ listingId: "porg_1", ...definition, authKind: "oauth", authConfig: {}, at })

  it.each([
    ["none", installed, [detected, health]],
    ["secret", secretListing, [detected, health]],
    ["oauth already", oauthListing, [health]]
  ] as const)("a server asking for OAuth, listing installed as %s", (_kind, given, expected) =>
    listing.given([given, enabled, wsEnabled]).when(challenged).then(expected))

  it("a failure that is not an OAuth challenge keeps the auth kind", () =>
    listing
      .given([installed, enabled, wsEnabled])
      .when(new RecordHealth({ ...target, workspaceId: "ws_1", status: "unhealthy", error: "connection refused", tools: [], oauthRequired: false }))
      .then([new HealthRecorded({ ...target, workspaceId: "ws_1", status: "unhealthy", error: "connection refused", tools: [], at })]))

  it("not for a workspace that has not enabled it", () => listing.given([installed, enabled]).when(challenged).thenThrows("NotEnabledInWorkspace"))

  it("the listing becomes oauth, marked detected, without a secret's header settings", () => {
    const state = [secretListing, enabled, wsEnabled, detected, health].reduce(evolve, initialListingState)
    expect(state).toMatchObject({ authKind: "oauth", authConfig: { detectedAt: at }, workspaces: { ws_1: { healthStatus: "unhealthy", healthError: "oauth_required" } } })
    expect(state._tag === "Live" && state.authConfig.header).toBeUndefined()
  })
})
