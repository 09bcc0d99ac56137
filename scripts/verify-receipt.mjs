#!/usr/bin/env node
/**
 * Checks signed approval receipts with nothing but Node and the platform's public key, as
 * docs/audit.md ("Approval receipts") specifies them:
 *
 *   node scripts/verify-receipt.mjs <receipts> <key>
 *
 * <receipts>: a receipt (JSON, as `agent.approvals.resolve` answers it under `receipt`, or a JSON
 * array of receipts), or an audit export (JSON Lines, `audit.export`): there, each `approval.resolved`
 * event's receipt, and that it names the event's approval, decision, time and input (its
 * `inputSha256` recomputed from the recorded input, unless the input is sealed under its person's
 * key: docs/audit.md, "Erasure by crypto-shredding"); and each `automation_run.approval_resolved`
 * event's, and that it names the event's run, step and attempt, decision and time.
 * <key>: the document `GET /.well-known/svc-audit-key` serves (JSON), or the PEM public key.
 *
 * Exit status 0 when every receipt verifies, 1 (naming each failure) otherwise, 2 when there is none.
 * Standalone on purpose: it imports nothing from the platform (scripts/offline-audit.mjs is Node alone).
 */
import { verify } from "node:crypto"
import { readFileSync } from "node:fs"
import { canonical, keyIdOf, publicKeyFrom, sha256Hex } from "./offline-audit.mjs"

const [receiptsFile, keyFile] = process.argv.slice(2)
if (receiptsFile === undefined || keyFile === undefined) {
  console.error("usage: node scripts/verify-receipt.mjs <receipt.json | export.jsonl> <public key: the served JSON document or a PEM>")
  process.exit(2)
}

const publicKey = publicKeyFrom(readFileSync(keyFile, "utf8"))
const keyId = keyIdOf(publicKey)

/** Each receipt to check, with where it was found and what its record says it must claim. */
const receiptsIn = (text) => {
  const trimmed = text.trim()
  try {
    const parsed = JSON.parse(trimmed)
    return (Array.isArray(parsed) ? parsed : [parsed]).map((receipt, i) => ({ where: `receipt ${i + 1}`, receipt, expected: {} }))
  } catch {
    // not one JSON document: an export's lines
  }
  return trimmed.split("\n").flatMap((line, i) => {
    const entry = JSON.parse(line)
    const event = entry.type === "event" ? entry.event : undefined
    if (event?.type === "automation_run.approval_resolved" && event.payload.receipt != null) {
      // an automation step's decision: its approval is the run, step and attempt; the call's input is
      // recorded with the request (automation_run.approval_requested), which an export need not carry
      const { payload } = event
      return [{
        where: `line ${i + 1}`,
        receipt: payload.receipt,
        expected: { approvalId: `${payload.runId}:${payload.index}:${payload.attempt}`, decision: payload.decision, decidedAt: payload.at }
      }]
    }
    if (event?.type !== "approval.resolved" || event.payload.receipt == null) return []
    const { payload } = event
    // a sealed input (`pd1.…`) cannot be opened here: the signature still covers the hash the node computed
    const sealed = typeof payload.parked.input === "string" && payload.parked.input.startsWith("pd1.")
    return [{
      where: `line ${i + 1}`,
      receipt: payload.receipt,
      expected: {
        approvalId: payload.parked.publicId,
        decision: payload.decision,
        decidedAt: payload.resolvedAt,
        decidedBy: payload.userId,
        askedBy: payload.parked.userId,
        capability: payload.parked.capability,
        ...(sealed ? {} : { inputSha256: sha256Hex(canonical(payload.parked.input)) })
      }
    }]
  })
}

const failuresOf = ({ receipt, expected }) => {
  const failures = []
  if (receipt?.version !== "svc-approval-receipt-v1") return ["not an approval receipt (version svc-approval-receipt-v1)"]
  if (receipt.keyId !== keyId) failures.push(`signed with key ${receipt.keyId}, not ${keyId}`)
  const { signature, ...signed } = receipt
  let valid = false
  try {
    valid = verify(null, Buffer.from(canonical(signed), "utf8"), publicKey, Buffer.from(signature, "base64url"))
  } catch {}
  if (!valid) failures.push("the signature is not the key's over what the receipt says")
  for (const [field, value] of Object.entries(expected)) {
    if (receipt[field] !== value) failures.push(`its ${field} ${JSON.stringify(receipt[field])} is not the recorded ${JSON.stringify(value)}`)
  }
  return failures
}

const found = receiptsIn(readFileSync(receiptsFile, "utf8"))
if (found.length === 0) {
  console.error("no receipt found")
  process.exit(2)
}
const failures = found.flatMap((r) => failuresOf(r).map((f) => `${r.where}: ${f}`))
if (failures.length > 0) {
  console.error(`the receipts do NOT verify (${failures.length} failures):`)
  for (const f of failures) console.error(`  ${f}`)
  process.exit(1)
}
for (const { receipt } of found) {
  console.log(`verified: ${receipt.approvalId} ${receipt.decision} by ${receipt.decidedBy} at ${receipt.decidedAt} (asked by ${receipt.askedBy}; ${receipt.capability}, input ${receipt.inputSha256})`)
}
