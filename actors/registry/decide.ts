import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import {
  DefaultSeedPermanent,
  type RegistryError,
  RegistryDisabled,
  RegistryExists,
  RegistryNotFound,
  SyncInProgress,
  SyncNotActive
} from "./errors.ts"
import {
  PageSynced,
  ReadmeFetched,
  RegistryAdded,
  type RegistryEvent,
  RegistryMoved,
  RegistryRemoved,
  SyncCompleted,
  SyncFailed,
  SyncStarted
} from "./events.ts"
import type { AddRegistry, RecordPage, RegistryCommand, StartSync } from "./protocol.ts"
import type { ActiveSync, LiveRegistry, RegistryState } from "./state.ts"

type Decision = Either.Either<ReadonlyArray<RegistryEvent>, RegistryError>

const live = (state: RegistryState, registryId: string) =>
  state._tag === "Live" ? Either.right(state) : Either.left(new RegistryNotFound({ registryId }))

const elapsed = (from: string, to: string) => Math.max(0, Date.parse(to) - Date.parse(from))

const add = (state: RegistryState, command: AddRegistry, meta: CommandMeta): Decision => {
  const { _tag, ...fields } = command
  if (state._tag !== "Live") return Either.right([new RegistryAdded({ ...fields, at: meta.at })])
  if (!command.isDefaultSeed) return Either.left(new RegistryExists({ registryId: command.registryId, baseUrl: command.baseUrl }))
  return Either.right(state.baseUrl === command.baseUrl ? [] : [new RegistryMoved({ registryId: command.registryId, baseUrl: command.baseUrl, at: meta.at })])
}

/** The lease: one sync at a time, unless the holder's lease ran out (its node stopped). */
const start = (registry: LiveRegistry, command: StartSync, meta: CommandMeta): Decision => {
  const { registryId, syncId, leaseMs } = command
  if (!registry.enabled) return Either.left(new RegistryDisabled({ registryId }))
  const held = registry.sync
  if (held !== null && held.syncId === syncId) return Either.right([])
  if (held !== null && meta.at < held.leaseUntil) return Either.left(new SyncInProgress({ registryId, syncId: held.syncId, leaseUntil: held.leaseUntil }))
  const supersedes = held?.syncId ?? null
  if (command.mode === "server") {
    return Either.right([new SyncStarted({ registryId, syncId, mode: "server", serverName: command.serverName ?? null, updatedSince: null, fromCursor: null, resumed: false, supersedes, leaseMs, at: meta.at })])
  }
  // a pass left unfinished is resumed from its checkpoint, asking what it asked; else a new pass
  const resumed = registry.checkpoint !== null && command.mode === "incremental" ? registry.checkpoint : null
  const mode = resumed !== null ? (resumed.updatedSince === null ? "full" : "incremental") : command.mode === "full" || registry.lastSyncedAt === null ? "full" : "incremental"
  const updatedSince = resumed !== null ? resumed.updatedSince : mode === "incremental" ? registry.lastSyncedAt : null
  return Either.right([
    new SyncStarted({ registryId, syncId, mode, serverName: null, updatedSince, fromCursor: resumed?.cursor ?? null, resumed: resumed !== null, supersedes, leaseMs, at: meta.at })
  ])
}

const holding = (registry: LiveRegistry, syncId: string): Either.Either<ActiveSync, RegistryError> =>
  registry.sync !== null && registry.sync.syncId === syncId
    ? Either.right(registry.sync)
    : Either.left(new SyncNotActive({ registryId: registry.registryId, syncId }))

const page = (registry: LiveRegistry, command: RecordPage, meta: CommandMeta): Decision =>
  Either.map(holding(registry, command.syncId), () => [
    new PageSynced({
      registryId: registry.registryId,
      syncId: command.syncId,
      servers: command.servers,
      fetched: command.fetched,
      skipped: command.skipped,
      nextCursor: command.nextCursor,
      at: meta.at
    })
  ])

export const decide = (state: RegistryState, command: RegistryCommand, meta: CommandMeta): Decision => {
  switch (command._tag) {
    case "AddRegistry":
      return add(state, command, meta)
    case "RemoveRegistry":
      return Either.flatMap(live(state, command.registryId), (registry): Decision =>
        registry.isDefaultSeed
          ? Either.left(new DefaultSeedPermanent({ registryId: registry.registryId }))
          : registry.orgId !== command.orgId
            ? Either.left(new RegistryNotFound({ registryId: command.registryId }))
            : Either.right([new RegistryRemoved({ registryId: registry.registryId, at: meta.at })])
      )
    case "StartSync":
      return Either.flatMap(live(state, command.registryId), (registry) => start(registry, command, meta))
    case "RecordPage":
      return Either.flatMap(live(state, command.registryId), (registry) => page(registry, command, meta))
    case "CompleteSync":
      return Either.flatMap(live(state, command.registryId), (registry) =>
        Either.map(holding(registry, command.syncId), (sync) => [
          new SyncCompleted({
            registryId: registry.registryId,
            syncId: sync.syncId,
            mode: sync.mode,
            syncedAt: sync.mode === "server" ? null : (registry.checkpoint?.passStartedAt ?? sync.startedAt),
            durationMs: elapsed(sync.startedAt, meta.at),
            counts: sync.counts,
            at: meta.at
          })
        ])
      )
    case "FailSync":
      return Either.flatMap(live(state, command.registryId), (registry) =>
        Either.map(holding(registry, command.syncId), (sync) => [
          new SyncFailed({
            registryId: registry.registryId,
            syncId: sync.syncId,
            mode: sync.mode,
            reason: command.reason,
            durationMs: elapsed(sync.startedAt, meta.at),
            counts: sync.counts,
            at: meta.at
          })
        ])
      )
    case "RecordReadme":
      return Either.map(live(state, command.registryId), (registry) => [
        new ReadmeFetched({ registryId: registry.registryId, serverId: command.serverId, readmeHtml: command.readmeHtml, at: meta.at })
      ])
  }
}
