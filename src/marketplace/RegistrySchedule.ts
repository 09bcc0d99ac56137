/**
 * What keeps catalogs fresh on a node: the global default seed added (or re-pointed at
 * `MCP_REGISTRY_URL`) at start; `plugin/catalog.sync`, an incremental sync of each enabled
 * registry every `CATALOG_SYNC_INTERVAL_SECONDS`, run by the node owning the registry actor's
 * partition; and the node's runner of on-demand syncs (`plugin/registry.sync`), which go on after
 * the request that started them has been answered.
 */
import { Context, Effect, type Fiber, FiberMap, FiberSet, Layer, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import { keyOf } from "../../actors/kernel.ts"
import { RegistryActor } from "../../actors/registry/actor.ts"
import { AddRegistry } from "../../actors/registry/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { EventLog } from "../../streams/EventLog.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import { DEFAULT_SEED_REGISTRY_ID, RegistrySettings } from "./RegistrySettings.ts"
import { runSync } from "./RegistrySync.ts"
import { enabledRegistrySyncs } from "./Queries.ts"

export interface RegistrySyncsService {
  /** Runs a sync's work in the node's scope, past the request that started it. */
  readonly fork: <A, E>(work: Effect.Effect<A, E, any>) => Effect.Effect<Fiber.RuntimeFiber<A, E>>
}

export class RegistrySyncs extends Context.Tag("svc/RegistrySyncs")<RegistrySyncs, RegistrySyncsService>() {}

/** How often the schedule looks for registries due (at most; never more often than the interval). */
const LOOK_EVERY_MS = 5_000

export const layer = Layer.scoped(
  RegistrySyncs,
  Effect.gen(function* () {
    const settings = yield* RegistrySettings
    const host = yield* ActorHost
    const log = yield* EventLog
    const running = yield* FiberSet.make()
    const scheduled = yield* FiberMap.make<string>()
    const context = yield* Effect.context<never>()
    const fork: RegistrySyncsService["fork"] = (work) =>
      FiberSet.run(
        running,
        Effect.provide(work as Effect.Effect<any, any, never>, context).pipe(
          Effect.tapErrorCause((cause) => Effect.logWarning("marketplace: an on-demand sync stopped", cause))
        )
      )

    const seed = host.send(
      RegistryActor,
      DEFAULT_SEED_REGISTRY_ID,
      new AddRegistry({
        registryId: DEFAULT_SEED_REGISTRY_ID,
        orgId: null,
        name: "Official MCP Registry",
        baseUrl: settings.defaultRegistryUrl,
        enabled: true,
        isDefaultSeed: true
      }),
      { commandId: randomUUID(), at: new Date().toISOString(), actor: "system" }
    )
    // added before the node serves (its event is then projected before the first request), unless
    // the partition's owner cannot be reached yet: then in the background
    const retried = seed.pipe(Effect.retry(Schedule.exponential("200 millis").pipe(Schedule.union(Schedule.spaced("5 seconds")), Schedule.upTo("5 minutes"))))
    const added = yield* Effect.either(seed)
    if (added._tag === "Left") {
      yield* Effect.forkScoped(retried.pipe(Effect.catchAllCause((cause) => Effect.logWarning("marketplace: the default seed registry could not be added", cause))))
    }

    if (settings.syncIntervalSeconds > 0) {
      const intervalMs = settings.syncIntervalSeconds * 1000
      const owned = (registryId: string) => host.ownership().ready.includes(partitionFor(keyOf(RegistryActor, registryId), log.partitions))
      const look = Effect.gen(function* () {
        const now = Date.now()
        const registries = yield* enabledRegistrySyncs
        for (const r of registries) {
          const held = r.sync !== null && Date.parse(r.sync.leaseUntil) > now
          const lastEnded = r.lastSync === null ? 0 : Date.parse(r.lastSync.endedAt)
          if (held || now - lastEnded < intervalMs || !owned(r.registryId)) continue
          yield* FiberMap.run(
            scheduled,
            r.registryId,
            runSync(r.registryId, { mode: "incremental", actor: "system" }).pipe(
              Effect.catchAllCause((cause) => Effect.logWarning(`marketplace: scheduled sync of ${r.registryId} did not run`, cause)),
              Effect.provide(context)
            ) as Effect.Effect<unknown, never, never>,
            { onlyIfMissing: true }
          )
        }
      }).pipe(Effect.catchAllCause((cause) => Effect.logWarning("marketplace: looking for registries due failed", cause)))
      yield* Effect.forkScoped(Effect.repeat(look, Schedule.spaced(Math.min(LOOK_EVERY_MS, intervalMs))))
    }
    return { fork }
  })
)
