/**
 * Which capability packs an organization may use (spec 7.3, 8): those with an enabled, non-deleted
 * listing the operator's denylist does not refuse. Kept 30 seconds per organization on each node;
 * the node that installs, enables, disables or uninstalls a pack drops the organization's entry.
 */
import { Clock, Context, Effect, Layer, Schema } from "effect"
import type { Db } from "../../streams/Db.ts"
import type { AnyCapability } from "../checkpoint/Capability.ts"
import { deniedBy, PluginSettings } from "../marketplace/PluginSettings.ts"
import { enabledPackNames } from "./Queries.ts"

/** Spec 8: the entitlement cache's lifetime. */
export const ENTITLEMENT_TTL_MS = 30_000

/** A capability claimed by a pack, invoked for an organization without it (spec 7.3). */
export class CapabilityNotInstalled extends Schema.TaggedError<CapabilityNotInstalled>()("CapabilityNotInstalled", {
  capability: Schema.String,
  pluginId: Schema.String,
  message: Schema.String
}) {}

const notInstalled = (capability: string, pluginId: string) =>
  new CapabilityNotInstalled({
    capability,
    pluginId,
    message: `${capability} is part of the capability pack ${pluginId}, which this organization has not installed and enabled: an Owner or Admin can install it with plugin.org.install {"pluginId":"${pluginId}"}, then enable it with plugin.org.set_enabled`
  })

export interface EntitlementsService {
  /** The pack ids the organization may use now (at most 30 seconds old). */
  readonly installedPacks: (orgId: string) => Effect.Effect<ReadonlySet<string>, unknown, Db>
  /** Forget what was read for the organization: its listings just changed on this node. */
  readonly drop: (orgId: string) => void
}

export class Entitlements extends Context.Tag("svc/Entitlements")<Entitlements, EntitlementsService>() {}

export const layer = Layer.effect(
  Entitlements,
  Effect.gen(function* () {
    const { denylist } = yield* PluginSettings
    const cache = new Map<string, { readonly packs: ReadonlySet<string>; readonly readAt: number }>()
    // bumped by each drop: a read that began before it does not put back what it read
    const generation = new Map<string, number>()
    const read = (orgId: string) =>
      Effect.map(enabledPackNames(orgId), (names) => new Set(names.filter((name) => deniedBy(denylist, name) === undefined)))
    return {
      installedPacks: (orgId) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const kept = cache.get(orgId)
          if (kept !== undefined && now - kept.readAt < ENTITLEMENT_TTL_MS) return kept.packs
          const before = generation.get(orgId) ?? 0
          const packs = yield* read(orgId)
          if ((generation.get(orgId) ?? 0) === before) cache.set(orgId, { packs, readAt: now })
          return packs
        }),
      drop: (orgId) => {
        cache.delete(orgId)
        generation.set(orgId, (generation.get(orgId) ?? 0) + 1)
      }
    }
  })
)

/** Whether the capability runs for an organization holding these packs: builtin ones always do. */
export const entitled = (capability: AnyCapability, packs: ReadonlySet<string>): boolean =>
  capability.claimedBy === "builtin" || packs.has(capability.claimedBy)

/** The checkpoint's check: a pack's capability only where the pack is installed and enabled. */
export const checkEntitlement = (capability: AnyCapability, orgId: string | null) =>
  capability.claimedBy === "builtin"
    ? Effect.void
    : Effect.flatMap(packsOf(orgId), (packs) => (entitled(capability, packs) ? Effect.void : Effect.fail(notInstalled(capability.name, capability.claimedBy))))

/** The packs the organization may use; none outside an organization. */
export const packsOf = (orgId: string | null) =>
  orgId === null ? Effect.succeed<ReadonlySet<string>>(new Set()) : Effect.flatMap(Entitlements, (entitlements) => entitlements.installedPacks(orgId))
