/**
 * Signed approval receipts on a running node (docs/audit.md, "Approval receipts"): a person
 * approves one parked call and denies another; each answer carries a receipt signed with the
 * node's audit key, the thread reads the same receipts back, the audit export carries them, and
 * `scripts/verify-receipt.mjs` checks them with the served public key alone, in a process of its
 * own; a receipt or an export edited after the fact fails it.
 */
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdtemp, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { postJson, streamChat } from "../support/chat.ts"
import { type SignedInPerson, signedInPlace } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { createNote, eventually, type Reply, send } from "./client.ts"

let node: TestNode
let alice: SignedInPerson
let aliceCookie: string
let ownerCookie: string
let as: (cookie: string, capability: string, input?: unknown) => Promise<Reply>
let dir: string

beforeAll(async () => {
  node = await startTestNode({ audit: { signingKey: undefined, checkpointEvents: 5, checkpointSeconds: 1 } })
  const place = await signedInPlace(node, ["alice"])
  alice = place.people.alice
  aliceCookie = alice.cookie
  ownerCookie = place.ownerCookie
  as = place.as
  dir = await mkdtemp(path.join(tmpdir(), "svc-receipts-"))
}, 60_000)

afterAll(async () => {
  await node?.stop()
})

const verifyReceipts = (receiptsFile: string, keyFile: string) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, ["scripts/verify-receipt.mjs", receiptsFile, keyFile], (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr }))
  })

/** Alice's turn that parks `node.delete` of a new note: the approval card, and the turn's result. */
const parkDelete = async () => {
  const nodeId = await createNote(node)
  const turn = await streamChat(node, { content: `/tool node__delete {"nodeId":"${nodeId}"}` }, { cookie: aliceCookie })
  return { nodeId, card: turn.events.find((e) => e.type === "approval-required"), result: turn.done }
}

describe("approval receipts", () => {
  it("are answered when an approval is resolved, read back with the thread, exported, and verified offline with the published key alone", async () => {
    const from = new Date(Date.now() - 60_000).toISOString()
    const approving = await parkDelete()
    const denying = await parkDelete()
    const approved = await postJson(node, "agent/approvals/resolve", { approvalId: approving.card.approvalId, decision: "approved" }, { cookie: aliceCookie })
    const denied = await postJson(node, "agent/approvals/resolve", { approvalId: denying.card.approvalId, decision: "denied", note: "keep it" }, { cookie: aliceCookie })
    expect(approved.status).toBe(200)
    expect(denied.body.execution).toEqual({ status: "denied" })

    const key = await send<{ keyId: string; publicKey: string }>(node, "/.well-known/svc-audit-key")
    expect(key.status).toBe(200)
    // the input's hash is SHA-256 of its canonical JSON; `{"nodeId":"…"}` is already canonical
    const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")
    const expected = (parked: typeof approving, decision: string) => ({
      version: "svc-approval-receipt-v1",
      approvalId: parked.card.approvalId,
      orgId: expect.any(String),
      workspaceId: expect.any(String),
      capability: "node.delete",
      inputSha256: sha256(`{"nodeId":"${parked.nodeId}"}`),
      askedBy: alice.userId,
      decidedBy: alice.userId,
      decision,
      decidedAt: expect.any(String),
      keyId: key.body.keyId,
      signature: expect.stringMatching(/^[A-Za-z0-9_-]{86}$/)
    })
    expect(approved.body.receipt).toEqual(expected(approving, "approved"))
    expect(denied.body.receipt).toEqual(expected(denying, "denied"))

    // read back: the thread's approvals carry the very receipts, with the decision's recorded time
    for (const [parked, answer] of [[approving, approved], [denying, denied]] as const) {
      const thread = await as(aliceCookie, "conversation.get", { conversationId: parked.result.conversationPublicId })
      const entry = thread.body.runs.find((r: any) => r.runId === parked.result.runId).approvals[0]
      expect(entry.receipt).toEqual(answer.body.receipt)
      expect(entry.receipt.decidedAt).toBe(entry.resolvedAt)
    }

    const keyFile = path.join(dir, "svc-audit-key.json")
    await writeFile(keyFile, JSON.stringify(key.body))
    const receiptsFile = path.join(dir, "receipts.json")
    await writeFile(receiptsFile, JSON.stringify([approved.body.receipt, denied.body.receipt]))
    const verified = await verifyReceipts(receiptsFile, keyFile)
    expect(verified.stderr).toBe("")
    expect(verified.code).toBe(0)
    expect(verified.stdout).toContain(`verified: ${approving.card.approvalId} approved by ${alice.userId}`)
    expect(verified.stdout).toContain(`verified: ${denying.card.approvalId} denied by ${alice.userId}`)

    // a denial passed off as an approval, or a decision moved in time: the signature no longer holds
    for (const [field, value] of [["decision", "approved"], ["decidedAt", "2020-01-01T00:00:00.000Z"]] as const) {
      const tamperedFile = path.join(dir, `tampered-${field}.json`)
      await writeFile(tamperedFile, JSON.stringify({ ...denied.body.receipt, [field]: value }))
      const refused = await verifyReceipts(tamperedFile, keyFile)
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain("receipt 1: the signature is not the key's over what the receipt says")
    }
    // a key that did not sign it
    const otherKeyFile = path.join(dir, "other-key.json")
    await writeFile(otherKeyFile, JSON.stringify({ ...key.body, publicKey: Buffer.alloc(32, 7).toString("base64url") }))
    expect((await verifyReceipts(receiptsFile, otherKeyFile)).code).toBe(1)

    // the export carries each decision with its receipt, which the script checks against the recorded input
    const to = new Date(Date.now() + 60_000).toISOString()
    const resolvedIn = (jsonl: string) => jsonl.trim().split("\n").map((l) => JSON.parse(l)).filter((l) => l.type === "event" && l.event.type === "approval.resolved")
    const exported = await eventually(
      () => as(ownerCookie, "audit.export", { from, to }),
      (r) => r.status === 200 && r.body.uncovered === 0 && resolvedIn(r.body.jsonl).length === 2,
      10_000
    )
    // in partition order: each conversation's events are on its key's partition
    const exportedReceipts = resolvedIn(exported.body.jsonl).map((l) => l.event.payload.receipt)
    expect(exportedReceipts).toHaveLength(2)
    expect(exportedReceipts).toEqual(expect.arrayContaining([approved.body.receipt, denied.body.receipt]))
    const exportFile = path.join(dir, "export.jsonl")
    await writeFile(exportFile, exported.body.jsonl)
    const fromExport = await verifyReceipts(exportFile, keyFile)
    expect(fromExport.stderr).toBe("")
    expect(fromExport.code).toBe(0)
    expect(fromExport.stdout.trim().split("\n")).toHaveLength(2)

    // an export whose recorded input was swapped: the receipt's hash of the input no longer matches it
    const swapped = (exported.body.jsonl as string).trim().split("\n").map((line) => {
      const entry = JSON.parse(line)
      if (entry.type !== "event" || entry.event.type !== "approval.resolved" || entry.event.payload.parked.publicId !== approving.card.approvalId) return line
      entry.event.payload.parked.input = { nodeId: denying.nodeId }
      return JSON.stringify(entry)
    }).join("\n")
    expect(swapped).toContain(`"input":{"nodeId":"${denying.nodeId}"}`)
    const swappedFile = path.join(dir, "swapped.jsonl")
    await writeFile(swappedFile, swapped)
    const refused = await verifyReceipts(swappedFile, keyFile)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/line \d+: its inputSha256 "[0-9a-f]{64}" is not the recorded "[0-9a-f]{64}"/)
  })

  it("a resolved approval of an automation step carries the same receipt: answered, read back with the run, exported, and verified offline", async () => {
    const from = new Date(Date.now() - 60_000).toISOString()
    const key = await send<{ keyId: string; publicKey: string }>(node, "/.well-known/svc-audit-key")
    const keyFile = path.join(dir, "svc-audit-key-steps.json")
    await writeFile(keyFile, JSON.stringify(key.body))
    // Alice's automation deletes the node its API payload names: a call that parks for her approval
    const automation = await as(aliceCookie, "automation.create", {
      name: "scrap the named node",
      trigger: { type: "api" },
      steps: [{ name: "scrap", stepType: "tool", config: { capability: "node.delete", input: { nodeId: "{{trigger.payload.nodeId}}" } } }],
      enabled: true
    })
    expect(automation.status, JSON.stringify(automation.body)).toBe(200)
    const nodeId = await createNote(node)
    const fired = await as(aliceCookie, "automation.trigger", { automationId: automation.body.automationId, payload: { nodeId } })
    expect(fired.status, JSON.stringify(fired.body)).toBe(200)
    const { runId } = fired.body
    await eventually(() => as(aliceCookie, "automation.get_run", { runId }), (r) => r.status === 200 && r.body.status === "waiting", 15_000)

    const resolved = await as(aliceCookie, "automation.resolve_approval", { runId, decision: "approved" })
    expect(resolved.status, JSON.stringify(resolved.body)).toBe(200)
    const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")
    expect(resolved.body.receipt).toEqual({
      version: "svc-approval-receipt-v1",
      approvalId: `${runId}:0:1`,
      orgId: expect.any(String),
      workspaceId: expect.any(String),
      capability: "node.delete",
      inputSha256: sha256(`{"nodeId":"${nodeId}"}`),
      askedBy: alice.userId,
      decidedBy: alice.userId,
      decision: "approved",
      decidedAt: expect.any(String),
      keyId: key.body.keyId,
      signature: expect.stringMatching(/^[A-Za-z0-9_-]{86}$/)
    })
    // read back with the run's step, the call made once approved
    const run = await eventually(() => as(aliceCookie, "automation.get_run", { runId }), (r) => r.status === 200 && r.body.status === "succeeded", 15_000)
    expect(run.body.steps[0].approval).toMatchObject({ decision: "approved", receipt: resolved.body.receipt })
    expect(run.body.steps[0].approval.receipt.decidedAt).toBe(run.body.steps[0].approval.resolvedAt)

    const receiptFile = path.join(dir, "step-receipt.json")
    await writeFile(receiptFile, JSON.stringify(resolved.body.receipt))
    const verified = await verifyReceipts(receiptFile, keyFile)
    expect(verified.stderr).toBe("")
    expect(verified.stdout).toContain(`verified: ${runId}:0:1 approved by ${alice.userId}`)
    const moved = path.join(dir, "step-receipt-moved.json")
    await writeFile(moved, JSON.stringify({ ...resolved.body.receipt, approvalId: `${runId}:0:2` }))
    expect((await verifyReceipts(moved, keyFile)).code).toBe(1)

    // the export carries the decision with its receipt, which the script checks against the recorded step and time
    const to = new Date(Date.now() + 60_000).toISOString()
    const stepDecisions = (jsonl: string) => jsonl.trim().split("\n").map((l) => JSON.parse(l)).filter((l) => l.type === "event" && l.event.type === "automation_run.approval_resolved")
    const exported = await eventually(
      () => as(ownerCookie, "audit.export", { from, to }),
      (r) => r.status === 200 && r.body.uncovered === 0 && stepDecisions(r.body.jsonl).length === 1,
      10_000
    )
    expect(stepDecisions(exported.body.jsonl)[0].event.payload.receipt).toEqual(resolved.body.receipt)
    const exportFile = path.join(dir, "steps-export.jsonl")
    await writeFile(exportFile, exported.body.jsonl)
    const fromExport = await verifyReceipts(exportFile, keyFile)
    expect(fromExport.stderr).toBe("")
    expect(fromExport.stdout).toContain(`verified: ${runId}:0:1 approved by ${alice.userId}`)
  })
})
