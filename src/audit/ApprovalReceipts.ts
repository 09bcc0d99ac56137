/**
 * Signed approval receipts (docs/audit.md, "Approval receipts"): an approver's decision on a parked
 * tool call, signed with the node's audit key (the key of the log's checkpoints) where the key is,
 * in the shell; the conversation's decider records it with the decision. Anyone holding the key
 * served at /.well-known/svc-audit-key checks one offline with `scripts/verify-receipt.mjs`.
 */
import { Effect } from "effect"
import { hash } from "node:crypto"
import type { ApprovalReceipt } from "../../actors/conversation/events.ts"
import type { Json } from "../../actors/kernel.ts"
import { canonicalJson } from "../../streams/Chain.ts"
import { AuditSigner } from "../../streams/Checkpoints.ts"

/** What a receipt claims: everything but the signing key's id and the signature. */
export type ReceiptClaim = Omit<ApprovalReceipt, "version" | "keyId" | "signature">

/** SHA-256 (lowercase hex) of the canonical JSON of a call's input: the same for every key order the input was stored in. */
export const inputSha256 = (input: Json): string => hash("sha256", canonicalJson(input), "hex")

/** The claim signed with the node's audit key: the signature covers every other member, as canonical JSON (UTF-8). */
export const signReceipt = (claim: ReceiptClaim): Effect.Effect<ApprovalReceipt, never, AuditSigner> =>
  Effect.map(AuditSigner, (signer) => {
    const unsigned = { version: "svc-approval-receipt-v1" as const, ...claim, keyId: signer.keyId }
    return { ...unsigned, signature: signer.signature(Buffer.from(canonicalJson(unsigned), "utf8")) }
  })
