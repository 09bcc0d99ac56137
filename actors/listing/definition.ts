/** What an org listing (spec 2.9's allow-list entry) is made of, shared by its commands, events and state. */
import { Schema } from "effect"
import { Json } from "../kernel.ts"

export const PluginType = Schema.Literal("mcp_server", "integration", "content_tool", "capability")
export type PluginType = typeof PluginType.Type

/** `registry`: from a catalog server; `custom`: an endpoint an admin entered; `svc`: a capability pack. */
export const ListingSource = Schema.Literal("registry", "custom", "svc")

/** The remote transports the platform connects to (a package run locally, stdio, is not one). */
export const Transport = Schema.Literal("streamable-http", "sse")
export type Transport = typeof Transport.Type

export const AuthKind = Schema.Literal("oauth", "secret", "none")
export type AuthKind = typeof AuthKind.Type

/**
 * Non-secret settings of the listing's authentication: for `secret`, the header the secret is sent
 * in and what precedes it (`Authorization` and `Bearer `), or, for a remote that declares its
 * secret as a URL variable, that variable (`{name}` in the endpoint URL, filled in at connect
 * time only); for `oauth`, the scopes asked for, and
 * `detectedAt` when the listing became `oauth` because its server asked for OAuth at connect time
 * (spec 6.3.4: the catalog never says OAuth).
 */
export const AuthConfig = Schema.Struct({
  header: Schema.optional(Schema.String),
  valuePrefix: Schema.optional(Schema.String),
  urlVariable: Schema.optional(Schema.String),
  scopes: Schema.optional(Schema.Array(Schema.String)),
  detectedAt: Schema.optional(Schema.String)
})
export type AuthConfig = typeof AuthConfig.Type

/** What a listing says of itself, in its events, its state and its answers. */
export const ListingFields = {
  pluginType: PluginType,
  /** Null for a custom server (and a capability pack). */
  catalogServerId: Schema.NullOr(Schema.String),
  source: ListingSource,
  name: Schema.NonEmptyString,
  title: Schema.NullOr(Schema.String),
  description: Schema.String,
  iconUrl: Schema.NullOr(Schema.String),
  endpointUrl: Schema.NullOr(Schema.String),
  transport: Schema.NullOr(Transport),
  authKind: AuthKind,
  authConfig: AuthConfig,
  config: Schema.Record({ key: Schema.String, value: Json })
}

export const ListingDefinition = { orgId: Schema.NonEmptyString, ...ListingFields }

export const HealthStatus = Schema.Literal("unknown", "healthy", "unhealthy")
export type HealthStatus = typeof HealthStatus.Type

/** A workspace's install of the listing (spec 2.9's workspace install). */
export const WorkspaceInstall = Schema.Struct({
  enabled: Schema.Boolean,
  healthStatus: HealthStatus,
  lastHealthCheckAt: Schema.NullOr(Schema.String),
  /** Why the last check failed, or null. */
  healthError: Schema.NullOr(Schema.String),
  /** Names of the tools the server listed at the last healthy check. */
  tools: Schema.Array(Schema.String),
  updatedAt: Schema.String
})
export type WorkspaceInstall = typeof WorkspaceInstall.Type
