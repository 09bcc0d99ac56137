/**
 * One sync of a registry (spec 6.3.3): the registry actor grants the lease (one sync per registry
 * across the cluster) and says where the pass starts (a failed pass's checkpoint, and its
 * `updated_since`); pages of `GET /v0.1/servers` are fetched until `nextCursor` is absent, each
 * recorded (and so upserted into the catalog) before the next is asked for. A failed call ends the
 * sync with its reason and leaves the checkpoint at the last page recorded.
 */
import { Clock, Effect } from "effect"
import { randomUUID } from "node:crypto"
import type { CommandMeta } from "../../actors/kernel.ts"
import { RegistryActor } from "../../actors/registry/actor.ts"
import type { CatalogEntry, SyncMode, SyncStarted } from "../../actors/registry/events.ts"
import { CompleteSync, FailSync, RecordPage, StartSync } from "../../actors/registry/protocol.ts"
import type { LiveRegistry, SyncOutcome } from "../../actors/registry/state.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { newPublicId } from "../identity/ApiKeyToken.ts"
import { deriveCatalogEntry } from "./CatalogEntry.ts"
import { failureReason, getServer, listServers } from "./RegistryClient.ts"
import { RegistrySettings } from "./RegistrySettings.ts"

/** A sync that holds the lease, and where its pages start. */
export interface StartedSync {
  readonly registryId: string
  readonly syncId: string
  readonly mode: SyncMode
  readonly baseUrl: string
  readonly serverName: string | null
  readonly updatedSince: string | null
  readonly fromCursor: string | null
  readonly actor: string
}

export interface SyncRequest {
  readonly mode: SyncMode
  readonly serverName?: string
  /** Who asked (`user:…`, `key:…`), or `system` for the schedule. */
  readonly actor: string
}

const metaOf = (actor: string) =>
  Effect.map(Clock.currentTimeMillis, (ms): CommandMeta => ({ commandId: randomUUID(), at: new Date(ms).toISOString(), actor }))

/** Takes the lease (409 `sync_in_progress` while another sync holds it). */
export const startSync = (registryId: string, request: SyncRequest) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const settings = yield* RegistrySettings
    const syncId = newPublicId("rsy")
    const { state, events } = yield* host.send(
      RegistryActor,
      registryId,
      new StartSync({ registryId, syncId, mode: request.mode, serverName: request.serverName, leaseMs: settings.leaseMs }),
      yield* metaOf(request.actor)
    )
    const started = events.find((e): e is SyncStarted => e._tag === "registry.sync_started")!
    return {
      registryId,
      syncId,
      mode: started.mode,
      baseUrl: (state as LiveRegistry).baseUrl,
      serverName: started.serverName,
      updatedSince: started.updatedSince,
      fromCursor: started.fromCursor,
      actor: request.actor
    } satisfies StartedSync
  })

/** The most entries' JSON one recorded page carries: a record stays well under Kafka's 1 MB default. */
const MAX_PAGE_EVENT_BYTES = 256 * 1024

/** A page's entries in parts small enough for one event each (one part, nearly always). */
const parts = (servers: ReadonlyArray<CatalogEntry>): ReadonlyArray<ReadonlyArray<CatalogEntry>> => {
  const all: Array<Array<CatalogEntry>> = [[]]
  let bytes = 0
  for (const server of servers) {
    const size = JSON.stringify(server).length
    if (bytes + size > MAX_PAGE_EVENT_BYTES && all[all.length - 1].length > 0) {
      all.push([])
      bytes = 0
    }
    all[all.length - 1].push(server)
    bytes += size
  }
  return all
}

const derived = (registryId: string, items: ReadonlyArray<unknown>) => {
  const servers: Array<CatalogEntry> = []
  for (const item of items) {
    const entry = deriveCatalogEntry(registryId, item)
    if (entry !== undefined) servers.push(entry)
  }
  return { servers, fetched: items.length, skipped: items.length - servers.length }
}

/** Fetches and records the pages of a started sync, then ends it; answers how it ended. */
export const drivePages = (sync: StartedSync) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const settings = yield* RegistrySettings
    const { registryId, syncId, actor } = sync
    const record = (page: { servers: ReadonlyArray<CatalogEntry>; fetched: number; skipped: number; nextCursor: string | null }) =>
      Effect.flatMap(metaOf(actor), (meta) => host.send(RegistryActor, registryId, new RecordPage({ registryId, syncId, ...page }), meta))
    const fail = (reason: string) =>
      Effect.flatMap(metaOf(actor), (meta) => host.send(RegistryActor, registryId, new FailSync({ registryId, syncId, reason }), meta))

    const pages = Effect.gen(function* () {
      if (sync.mode === "server") {
        const item = yield* getServer(sync.baseUrl, sync.serverName!, "latest")
        yield* record({ ...derived(registryId, [item]), nextCursor: null })
        return
      }
      let cursor = sync.fromCursor
      for (;;) {
        const page = yield* listServers(sync.baseUrl, { cursor, limit: settings.pageSize, updatedSince: sync.updatedSince, includeDeleted: true })
        const { servers, fetched, skipped } = derived(registryId, page.servers)
        const split = parts(servers)
        // the checkpoint moves past the page with its last part only: a page cut short is asked for again
        for (const [i, part] of split.entries()) {
          const last = i === split.length - 1
          yield* record({ servers: part, fetched: last ? fetched : 0, skipped: last ? skipped : 0, nextCursor: last ? page.nextCursor : cursor })
        }
        if (page.nextCursor === null) return
        cursor = page.nextCursor
      }
    })

    const ended = yield* pages.pipe(
      Effect.zipRight(Effect.flatMap(metaOf(actor), (meta) => host.send(RegistryActor, registryId, new CompleteSync({ registryId, syncId }), meta))),
      Effect.catchTags({
        RegistryCallFailed: (e) => fail(failureReason(e)),
        OutboundRefused: (e) => fail(failureReason(e)),
        OutboundTimeout: (e) => fail(failureReason(e)),
        OutboundResponseTooLarge: (e) => fail(failureReason(e)),
        OutboundConnectionFailed: (e) => fail(failureReason(e))
      })
    )
    return (ended.state as LiveRegistry).lastSync as SyncOutcome
  }).pipe(Effect.withSpan("RegistrySync.drivePages", { attributes: { registryId: sync.registryId, mode: sync.mode } }))

/** A whole sync: the lease, the pages, the end. */
export const runSync = (registryId: string, request: SyncRequest) => Effect.flatMap(startSync(registryId, request), drivePages)
