/** The registry actor as a decider table: adding (and the default seed's re-pointing), removal,
 * the sync lease (one at a time, taken over once it runs out), pages moving the checkpoint, a
 * failure keeping it, the next run resuming it, and completion moving last_synced_at. */
import { describe, expect, it } from "@effect/vitest"
import { RegistryActor } from "../../actors/registry/actor.ts"
import { DefaultSeedPermanent, RegistryExists, RegistryNotFound, SyncInProgress, SyncNotActive } from "../../actors/registry/errors.ts"
import {
  type CatalogEntry,
  PageSynced,
  RegistryAdded,
  RegistryMoved,
  RegistryRemoved,
  SyncCompleted,
  SyncFailed,
  SyncStarted
} from "../../actors/registry/events.ts"
import { AddRegistry, CompleteSync, FailSync, RecordPage, RemoveRegistry, StartSync } from "../../actors/registry/protocol.ts"
import { meta, projectedRows, spec } from "../support/decider.ts"

const registryId = "mreg_1"
const T0 = "2024-05-01T12:00:00.000Z"
const T1 = "2024-05-01T12:00:30.000Z"
const T2 = "2024-05-01T12:01:00.000Z"
const T9 = "2024-05-01T12:05:00.000Z"
const at = (time: string) => meta({ at: time })

const added = new RegistryAdded({ registryId, orgId: "org_1", name: "Team", baseUrl: "https://r.example", enabled: true, isDefaultSeed: false, at: T0 })
const seedAdded = new RegistryAdded({ registryId, orgId: null, name: "Official", baseUrl: "https://registry.modelcontextprotocol.io", enabled: true, isDefaultSeed: true, at: T0 })

const entry = (name: string, version: string, isLatest: boolean, status: CatalogEntry["status"] = "active"): CatalogEntry => ({
  serverId: `mcat_${name}_${version}`,
  name,
  version,
  isLatest,
  title: null,
  description: "",
  repository: null,
  websiteUrl: null,
  icons: [],
  packages: [],
  remotes: [],
  transportTypes: ["stdio"],
  authKind: "none",
  categories: [],
  status,
  publishedAt: null,
  upstreamUpdatedAt: null,
  statusChangedAt: null,
  meta: {}
})

const counts = (c: Partial<{ pages: number; fetched: number; upserted: number; skipped: number; deleted: number }>) => ({ pages: 0, fetched: 0, upserted: 0, skipped: 0, deleted: 0, ...c })
const started = (syncId: string, time: string, fields: Partial<ConstructorParameters<typeof SyncStarted>[0]> = {}) =>
  new SyncStarted({ registryId, syncId, mode: "full", serverName: null, updatedSince: null, fromCursor: null, resumed: false, supersedes: null, leaseMs: 60_000, at: time, ...fields })
const page = (syncId: string, time: string, nextCursor: string | null, servers: ReadonlyArray<CatalogEntry> = [entry("a", "1", true)]) =>
  new PageSynced({ registryId, syncId, servers, fetched: servers.length + 1, skipped: 1, nextCursor, at: time })

describe("registry: adding and removing", () => {
  it("adds a registry", () => {
    spec(RegistryActor).given([]).when(new AddRegistry({ registryId, orgId: "org_1", name: "Team", baseUrl: "https://r.example", enabled: true, isDefaultSeed: false }), at(T0)).then([added])
  })
  it("refuses a second add at the same base URL", () => {
    spec(RegistryActor).given([added]).when(new AddRegistry({ registryId, orgId: "org_1", name: "Again", baseUrl: "https://r.example", enabled: true, isDefaultSeed: false })).thenThrows(new RegistryExists({ registryId, baseUrl: "https://r.example" }))
  })
  it("adds the default seed again as nothing, and re-points it when MCP_REGISTRY_URL changed", () => {
    const again = (baseUrl: string) => new AddRegistry({ registryId, orgId: null, name: "Official", baseUrl, enabled: true, isDefaultSeed: true })
    spec(RegistryActor).given([seedAdded]).when(again("https://registry.modelcontextprotocol.io")).thenNothingHappened()
    spec(RegistryActor).given([seedAdded]).when(again("https://mirror.example"), at(T1)).then([new RegistryMoved({ registryId, baseUrl: "https://mirror.example", at: T1 })])
  })
  it("removes an organization's registry, not another organization's, nor the seed", () => {
    spec(RegistryActor).given([added]).when(new RemoveRegistry({ registryId, orgId: "org_1" }), at(T1)).then([new RegistryRemoved({ registryId, at: T1 })])
    spec(RegistryActor).given([added]).when(new RemoveRegistry({ registryId, orgId: "org_2" })).thenThrows(new RegistryNotFound({ registryId }))
    spec(RegistryActor).given([seedAdded]).when(new RemoveRegistry({ registryId, orgId: "org_1" })).thenThrows(new DefaultSeedPermanent({ registryId }))
    spec(RegistryActor).given([added, new RegistryRemoved({ registryId, at: T1 })]).when(new StartSync({ registryId, syncId: "s1", mode: "full", leaseMs: 60_000 })).thenThrows("RegistryNotFound")
  })
})

describe("registry: the sync lease and the checkpoint", () => {
  it("starts the first sync as full, whatever was asked", () => {
    spec(RegistryActor).given([added]).when(new StartSync({ registryId, syncId: "s1", mode: "incremental", leaseMs: 60_000 }), at(T0)).then([started("s1", T0)])
  })
  it("refuses a second sync while the lease holds, and takes over once it ran out", () => {
    const command = new StartSync({ registryId, syncId: "s2", mode: "incremental", leaseMs: 60_000 })
    spec(RegistryActor).given([added, started("s1", T0)]).when(command, at(T1)).thenThrows(new SyncInProgress({ registryId, syncId: "s1", leaseUntil: "2024-05-01T12:01:00.000Z" }))
    // a page renews the lease
    spec(RegistryActor).given([added, started("s1", T0), page("s1", T1, "c1")]).when(command, at("2024-05-01T12:01:10.000Z")).thenThrows("SyncInProgress")
    // the pass it left unfinished goes on
    spec(RegistryActor).given([added, started("s1", T0), page("s1", T1, "c1")]).when(command, at(T9)).then([started("s2", T9, { supersedes: "s1", fromCursor: "c1", resumed: true })])
  })
  it("records a page only from the sync holding the lease", () => {
    const servers = [entry("a", "1", true)]
    spec(RegistryActor).given([added, started("s1", T0)]).when(new RecordPage({ registryId, syncId: "s1", servers, fetched: 2, skipped: 1, nextCursor: "c1" }), at(T1)).then([page("s1", T1, "c1")])
    spec(RegistryActor).given([added, started("s1", T0)]).when(new RecordPage({ registryId, syncId: "s0", servers, fetched: 2, skipped: 1, nextCursor: "c1" })).thenThrows(new SyncNotActive({ registryId, syncId: "s0" }))
  })
  it("completes with the pass's beginning as last_synced_at, its duration and counts; the next sync is incremental from there", () => {
    const history = [added, started("s1", T0), page("s1", T1, "c1"), page("s1", T1, null, [entry("b", "1", true, "deleted")])]
    spec(RegistryActor).given(history).when(new CompleteSync({ registryId, syncId: "s1" }), at(T2)).then([
      new SyncCompleted({ registryId, syncId: "s1", mode: "full", syncedAt: T0, durationMs: 60_000, counts: counts({ pages: 2, fetched: 4, upserted: 2, skipped: 2, deleted: 1 }), at: T2 })
    ])
    const completed = new SyncCompleted({ registryId, syncId: "s1", mode: "full", syncedAt: T0, durationMs: 60_000, counts: counts({}), at: T2 })
    spec(RegistryActor).given([...history, completed]).when(new StartSync({ registryId, syncId: "s2", mode: "incremental", leaseMs: 60_000 }), at(T9)).then([
      started("s2", T9, { mode: "incremental", updatedSince: T0 })
    ])
    spec(RegistryActor).given([...history, completed]).when(new StartSync({ registryId, syncId: "s2", mode: "full", leaseMs: 60_000 }), at(T9)).then([started("s2", T9)])
  })
  it("fails with a reason, keeping the checkpoint; the next run resumes the pass from it, and its end counts from the pass's beginning", () => {
    const incremental = started("s1", T0, { mode: "incremental", updatedSince: "2024-04-30T00:00:00.000Z" })
    const history = [added, incremental, page("s1", T1, "c1")]
    spec(RegistryActor).given(history).when(new FailSync({ registryId, syncId: "s1", reason: "http_503: the registry answered 503" }), at(T2)).then([
      new SyncFailed({ registryId, syncId: "s1", mode: "incremental", reason: "http_503: the registry answered 503", durationMs: 60_000, counts: counts({ pages: 1, fetched: 2, upserted: 1, skipped: 1 }), at: T2 })
    ])
    const failed = new SyncFailed({ registryId, syncId: "s1", mode: "incremental", reason: "x", durationMs: 60_000, counts: counts({}), at: T2 })
    const resumed = started("s2", T9, { mode: "incremental", updatedSince: "2024-04-30T00:00:00.000Z", fromCursor: "c1", resumed: true })
    spec(RegistryActor).given([...history, failed]).when(new StartSync({ registryId, syncId: "s2", mode: "incremental", leaseMs: 60_000 }), at(T9)).then([resumed])
    spec(RegistryActor).given([...history, failed, resumed, page("s2", T9, null)]).when(new CompleteSync({ registryId, syncId: "s2" }), at(T9)).then([
      new SyncCompleted({ registryId, syncId: "s2", mode: "incremental", syncedAt: T0, durationMs: 0, counts: counts({ pages: 1, fetched: 2, upserted: 1, skipped: 1 }), at: T9 })
    ])
  })
  it("syncs one server without touching the pass or last_synced_at", () => {
    const one = started("s2", T9, { mode: "server", serverName: "a" })
    spec(RegistryActor).given([added, started("s1", T0), page("s1", T1, "c1"), new SyncFailed({ registryId, syncId: "s1", mode: "full", reason: "x", durationMs: 1, counts: counts({}), at: T1 })])
      .when(new StartSync({ registryId, syncId: "s2", mode: "server", serverName: "a", leaseMs: 60_000 }), at(T9)).then([one])
    spec(RegistryActor).given([added, one, page("s2", T9, null)]).when(new CompleteSync({ registryId, syncId: "s2" }), at(T9)).then([
      new SyncCompleted({ registryId, syncId: "s2", mode: "server", syncedAt: null, durationMs: 0, counts: counts({ pages: 1, fetched: 2, upserted: 1, skipped: 1 }), at: T9 })
    ])
  })
})

describe("registry: the catalog read model", () => {
  it("keeps is_latest on one version per name: the newest flagged one", () => {
    const rows = projectedRows(RegistryActor, `registry:${registryId}`, [
      [added, T0],
      [started("s1", T0), T0],
      [page("s1", T1, "c1", [entry("a", "1", true), entry("b", "1", true)]), T1],
      [page("s1", T1, null, [entry("a", "1", false), entry("a", "2", true)]), T1]
    ])
    expect(rows.catalog_latest.map((r) => [r.name, r.version, r.server_id])).toEqual([["a", "2", "mcat_a_2"], ["b", "1", "mcat_b_1"]])
    expect(rows.catalog_servers.map((r) => [r.name, r.version])).toEqual([["a", "1"], ["a", "2"], ["b", "1"]])
    expect(rows.registries[0]).toMatchObject({ last_synced_cursor: null, last_synced_at: null })
  })
})
