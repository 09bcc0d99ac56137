/**
 * The audit wing's contracts: the organization audit log (`audit.list`) and its export with proofs
 * (`audit.export`), for an Owner, on the API and MCP; a recorded turn replayed against its tape
 * (`run.replay`), for an Owner, on the API alone.
 */
import { Schema } from "effect"
import { defineContract } from "../checkpoint/Capability.ts"
import { PageLimit } from "../platform/Paging.ts"

export const Entry = Schema.Struct({
  id: Schema.String,
  at: Schema.String,
  kind: Schema.Literal("capability", "security", "playbook"),
  /** The security event's type, e.g. `api_key.revoked`; null for an invocation. */
  event: Schema.NullOr(Schema.String),
  capability: Schema.NullOr(Schema.String),
  surface: Schema.NullOr(Schema.String),
  workspaceId: Schema.NullOr(Schema.String),
  principalKind: Schema.String,
  apiKeyId: Schema.NullOr(Schema.String),
  userId: Schema.NullOr(Schema.String),
  outcome: Schema.NullOr(Schema.String),
  errorTag: Schema.NullOr(Schema.String),
  durationMs: Schema.NullOr(Schema.Number),
  detail: Schema.NullOr(Schema.Unknown)
})
export type Entry = typeof Entry.Type

/** Both read the organization's audit trail: its Owner only, on the API and MCP. */
const ownerReads = {
  scope: "organization",
  roles: ["org:owner"],
  surfaces: ["api", "mcp"],
  sensitivity: "high",
  mutating: false,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin"
} as const

export const listAudit = defineContract({
  name: "audit.list",
  description: "List the organization's audit log, newest first, filtered by kind, event, capability, surface, person, key, outcome or time.",
  ...ownerReads,
  input: Schema.Struct({
    kind: Schema.optional(Schema.Literal("capability", "security", "playbook")),
    event: Schema.optional(Schema.String),
    capability: Schema.optional(Schema.String),
    surface: Schema.optional(Schema.Literal("api", "mcp", "agent", "a2a", "playbook")),
    userId: Schema.optional(Schema.String),
    apiKeyId: Schema.optional(Schema.String),
    outcome: Schema.optional(Schema.Literal("succeeded", "failed")),
    since: Schema.optional(Schema.DateTimeUtc),
    until: Schema.optional(Schema.DateTimeUtc),
    limit: Schema.optional(PageLimit),
    cursor: Schema.optional(Schema.String)
  }),
  output: Schema.Struct({ entries: Schema.Array(Entry), nextCursor: Schema.NullOr(Schema.String) })
})

export const exportAuditTrail = defineContract({
  name: "audit.export",
  description:
    "Export the organization's audit trail between two times as JSON Lines read from the log: each event with its partition, offset and hashes, the chain's links and the signed checkpoints covering them; check it with scripts/verify-audit-export.mjs and the key at /.well-known/svc-audit-key.",
  ...ownerReads,
  input: Schema.Struct({ from: Schema.DateTimeUtc, to: Schema.DateTimeUtc }),
  output: Schema.Struct({
    /** The export, one JSON object per line (the first describes it). */
    jsonl: Schema.String,
    events: Schema.Number,
    checkpoints: Schema.Number,
    /** Events after their partition's last checkpoint: export again once the next one is written. */
    uncovered: Schema.Number
  })
})

export const erasePerson = defineContract({
  name: "person.erase",
  description:
    "Erase a person of the organization (an Owner, or the person themself): their data key is destroyed, so their messages, replies and summaries read as erased from now on, while the log, its chain and its replays stay verifiable; recorded as `person.erased` in the audit log. Cannot be undone.",
  scope: "organization",
  roles: ["org:owner", "org:member"],
  // a person decides it, never a key or an agent
  requiresPerson: true,
  surfaces: ["api"],
  sensitivity: "high",
  mutating: true,
  destructive: true,
  needsApproval: false,
  claimedBy: "builtin",
  input: Schema.Struct({ userId: Schema.NonEmptyString }),
  output: Schema.Struct({
    /** The audit record's id (`era_`). */
    erasureId: Schema.String,
    userId: Schema.String,
    keysDestroyed: Schema.Number
  })
})

export const replayRun = defineContract({
  name: "run.replay",
  description:
    "Re-run a recorded assistant turn of the organization under this build's code against its tape, calling no model and no tool, and say whether it is identical or where it first diverges (step, tool call, field).",
  ...ownerReads,
  // it runs the turn's code: an auditor's call over the API, not a tool for an agent or MCP client
  surfaces: ["api"],
  input: Schema.Struct({ runId: Schema.NonEmptyString }),
  output: Schema.Struct({
    identical: Schema.Boolean,
    modelCalls: Schema.NullOr(Schema.Number),
    toolCalls: Schema.NullOr(Schema.Number),
    events: Schema.NullOr(Schema.Number),
    divergence: Schema.NullOr(
      Schema.Struct({
        step: Schema.Number,
        toolCallId: Schema.NullOr(Schema.String),
        field: Schema.String,
        recorded: Schema.Unknown,
        replayed: Schema.Unknown
      })
    )
  })
})
