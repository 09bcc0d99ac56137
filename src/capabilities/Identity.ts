/**
 * Capabilities about the caller's own identity. (Key management, sessions and SSO come with the
 * identity issue.)
 */
import { Effect, Schema } from "effect"
import { type AnyCapability, defineCapability } from "../Capabilities.ts"
import { Unauthorized } from "../Errors.ts"

export const whoami = defineCapability({
  name: "auth.whoami",
  description: "Who the presented credential is: its key id, organization, workspace and person.",
  scope: "principal",
  input: Schema.Struct({}),
  output: Schema.Struct({
    authenticated: Schema.Literal(true),
    apiKeyId: Schema.String,
    orgId: Schema.String,
    workspaceId: Schema.NullOr(Schema.String),
    userId: Schema.NullOr(Schema.String)
  }),
  surfaces: ["api", "mcp"],
  roles: ["org:owner", "org:member", "workspace:admin", "workspace:member", "workspace:viewer", "person"],
  sensitivity: "low",
  mutating: false,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin",
  // the route passes only the Authorization header, so every caller here holds a bearer credential
  handler: ({ principal }) =>
    principal.apiKeyId === null || principal.orgId === null
      ? new Unauthorized({ reason: "missing_credential", message: "whoami takes an Authorization: Bearer credential" })
      : Effect.succeed({
          authenticated: true as const,
          apiKeyId: principal.apiKeyId,
          orgId: principal.orgId,
          workspaceId: principal.workspaceId,
          userId: principal.userId
        })
})

export const identityCapabilities: ReadonlyArray<AnyCapability> = [whoami]
