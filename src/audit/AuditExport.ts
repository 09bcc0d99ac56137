/**
 * `audit.export`: an organization's audit trail between two times as JSON Lines, read from the log
 * with the hashes and signed checkpoints that prove it (streams/AuditExport.ts, docs/audit.md),
 * for an auditor to check with `scripts/verify-audit-export.mjs` and the public key alone.
 */
import { Effect, Option, Schema } from "effect"
import { exportAudit } from "../../streams/AuditExport.ts"
import { AuditSigner, publicKeyDocument } from "../../streams/Checkpoints.ts"
import { type AnyCapability, defineCapability } from "../checkpoint/Capability.ts"
import { BadRequest } from "../platform/Errors.ts"

/** The public key of this node's signed checkpoints, served at /.well-known/svc-audit-key; fails where the node signs none. */
export const auditPublicKey = Effect.map(AuditSigner, publicKeyDocument)

export const exportAuditTrail = defineCapability({
  name: "audit.export",
  description:
    "Export the organization's audit trail between two times as JSON Lines read from the log: each event with its partition, offset and hashes, the chain's links and the signed checkpoints covering them; check it with scripts/verify-audit-export.mjs and the key at /.well-known/svc-audit-key.",
  scope: "organization",
  roles: ["org:owner"],
  surfaces: ["api", "mcp"],
  sensitivity: "high",
  mutating: false,
  destructive: false,
  needsApproval: false,
  claimedBy: "builtin",
  input: Schema.Struct({ from: Schema.DateTimeUtc, to: Schema.DateTimeUtc }),
  output: Schema.Struct({
    /** The export, one JSON object per line (the first describes it). */
    jsonl: Schema.String,
    events: Schema.Number,
    checkpoints: Schema.Number,
    /** Events after their partition's last checkpoint: export again once the next one is written. */
    uncovered: Schema.Number
  }),
  handler: (invocation, input) =>
    Effect.gen(function* () {
      if (input.to.epochMillis <= input.from.epochMillis) {
        return yield* new BadRequest({ reason: "invalid_time_range", message: "`to` must be after `from`" })
      }
      const signer = yield* Effect.serviceOption(AuditSigner)
      const exported = yield* exportAudit(
        { orgId: invocation.orgId!, from: input.from.epochMillis, to: input.to.epochMillis },
        Option.match(signer, { onNone: () => null, onSome: (s) => s.keyId })
      )
      return { jsonl: `${exported.lines.join("\n")}\n`, events: exported.events, checkpoints: exported.checkpoints, uncovered: exported.uncovered }
    })
})

export const auditExportCapabilities: ReadonlyArray<AnyCapability> = [exportAuditTrail]
