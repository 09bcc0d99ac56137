/**
 * `audit.export`: an organization's audit trail between two times as JSON Lines, read from the log
 * with the hashes and signed checkpoints that prove it (streams/AuditExport.ts, docs/audit.md),
 * for an auditor to check with `scripts/verify-audit-export.mjs` and the public key alone.
 */
import { Effect, Option } from "effect"
import { exportAudit } from "../../streams/AuditExport.ts"
import { AuditSigner, publicKeyDocument } from "../../streams/Checkpoints.ts"
import { type AnyCapability, implement } from "../checkpoint/Capability.ts"
import { BadRequest } from "../platform/Errors.ts"
import * as Api from "./Api.ts"

/** The public key of this node's signed checkpoints, served at /.well-known/svc-audit-key; fails where the node signs none. */
export const auditPublicKey = Effect.map(AuditSigner, publicKeyDocument)

export const exportAuditTrail = implement(Api.exportAuditTrail, (invocation, input) =>
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
)

export const auditExportCapabilities: ReadonlyArray<AnyCapability> = [exportAuditTrail]
