/**
 * The entitlement cache (spec 8): an organization's packs read from the listings read model, kept
 * 30 seconds, dropped at once by `drop`; disabled, uninstalled and denylisted listings entitle nothing.
 */
import { it } from "@effect/vitest"
import { Effect, Layer, TestClock } from "effect"
import { describe, expect } from "vitest"
import * as Db from "../../streams/Db.ts"
import { PluginSettings } from "../../src/marketplace/PluginSettings.ts"
import { Entitlements, layer as entitlementsLayer } from "../../src/packs/Entitlement.ts"
import { databaseUrl, uniqueName } from "../support/env.ts"

const schema = uniqueName("ent")
const db = Db.layer({ url: databaseUrl, schema, max: 2 })
const settings = Layer.succeed(PluginSettings, { denylist: ["svc/media-video"], refreshLeadSeconds: 300, refreshCheckSeconds: 0 })
const TestLayer = Layer.merge(entitlementsLayer.pipe(Layer.provide(settings)), db)

const listing = (orgId: string, name: string, state: { enabled: boolean; deleted?: boolean }) =>
  Effect.flatMap(Db.Db, (d) => Effect.promise(() => d.sql`
    insert into ${d.table("plugin_listings")} (listing_id, org_id, plugin_type, source, name, description, auth_kind, auth_config, enabled, config, created_at, updated_at, deleted_at)
    values (${`porg_${orgId}_${name}`}, ${orgId}, 'capability', 'svc', ${name}, '', 'none', '{}', ${state.enabled}, '{}', now(), now(), ${state.deleted === true ? new Date() : null})
    on conflict (listing_id) do update set enabled = excluded.enabled, deleted_at = excluded.deleted_at`))

describe("entitlement cache", () => {
  it.layer(TestLayer, { timeout: 30_000 })((it) => {
    it.effect("enabled, live, not denylisted listings entitle; the answer is kept 30 s unless dropped", () =>
      Effect.gen(function* () {
        const entitlements = yield* Entitlements
        yield* listing("org_a", "svc/documents", { enabled: true })
        yield* listing("org_a", "svc/media-svg", { enabled: false })
        yield* listing("org_a", "svc/media-image", { enabled: true, deleted: true })
        yield* listing("org_a", "svc/media-video", { enabled: true })
        expect([...(yield* entitlements.installedPacks("org_a"))]).toEqual(["svc/documents"])
        expect([...(yield* entitlements.installedPacks("org_b"))]).toEqual([])

        // changed behind the cache (as by another node): unseen for 30 s, then read again
        yield* listing("org_a", "svc/media-svg", { enabled: true })
        yield* TestClock.adjust("29 seconds")
        expect([...(yield* entitlements.installedPacks("org_a"))]).toEqual(["svc/documents"])
        yield* TestClock.adjust("1 second")
        expect([...(yield* entitlements.installedPacks("org_a"))].sort()).toEqual(["svc/documents", "svc/media-svg"])

        // changed on this node: dropped at once
        yield* listing("org_a", "svc/documents", { enabled: false })
        entitlements.drop("org_a")
        expect([...(yield* entitlements.installedPacks("org_a"))]).toEqual(["svc/media-svg"])
      })
    )
  })
})
