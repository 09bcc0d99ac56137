/** Rejections of registry commands, with the HTTP status, code and reason each maps to. */
import { Schema } from "effect"

/** 404 `not_found`, reason `registry_not_found`: none, removed, or another organization's. */
export class RegistryNotFound extends Schema.TaggedError<RegistryNotFound>()("RegistryNotFound", { registryId: Schema.String }) {}

/** 409 `conflict`, reason `registry_exists`: the organization has a registry at that base URL. */
export class RegistryExists extends Schema.TaggedError<RegistryExists>()("RegistryExists", { registryId: Schema.String, baseUrl: Schema.String }) {}

/** 409 `conflict`, reason `default_seed_registry`: the global default seed is not an organization's to remove. */
export class DefaultSeedPermanent extends Schema.TaggedError<DefaultSeedPermanent>()("DefaultSeedPermanent", { registryId: Schema.String }) {}

/** 409 `conflict`, reason `sync_in_progress`: another sync of the registry holds the lease. */
export class SyncInProgress extends Schema.TaggedError<SyncInProgress>()("SyncInProgress", {
  registryId: Schema.String,
  syncId: Schema.String,
  leaseUntil: Schema.String
}) {}

/** 409 `conflict`, reason `sync_not_active`: the sync no longer holds the lease (taken over, or ended). */
export class SyncNotActive extends Schema.TaggedError<SyncNotActive>()("SyncNotActive", { registryId: Schema.String, syncId: Schema.String }) {}

/** 409 `conflict`, reason `registry_disabled`. */
export class RegistryDisabled extends Schema.TaggedError<RegistryDisabled>()("RegistryDisabled", { registryId: Schema.String }) {}

export const RegistryError = Schema.Union(RegistryNotFound, RegistryExists, DefaultSeedPermanent, SyncInProgress, SyncNotActive, RegistryDisabled)
export type RegistryError = typeof RegistryError.Type
