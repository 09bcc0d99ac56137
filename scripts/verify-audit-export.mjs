#!/usr/bin/env node
/**
 * Checks an audit export (`audit.export`, JSON Lines) with nothing but Node and the platform's
 * public key, as docs/audit.md specifies both:
 *
 *   node scripts/verify-audit-export.mjs <export.jsonl> <key>
 *
 * <key>: the document `GET /.well-known/svc-audit-key` serves (JSON), or the PEM public key.
 *
 * Per partition: every event's and checkpoint's hash is recomputed from its content and `prev`;
 * every entry chains onto the one before (its `prev` is that entry's hash); every checkpoint's
 * signature is the key's, over a claim the chain before it holds; every exported event is covered
 * by a checkpoint. Exit status 0 when all holds, 1 (with the first failures) otherwise.
 *
 * Standalone on purpose: it imports nothing from the platform (scripts/offline-audit.mjs is Node alone).
 */
import { verify } from "node:crypto"
import { readFileSync } from "node:fs"
import { canonical, publicKeyFrom, sha256Hex } from "./offline-audit.mjs"

const [exportFile, keyFile] = process.argv.slice(2)
if (exportFile === undefined || keyFile === undefined) {
  console.error("usage: node scripts/verify-audit-export.mjs <export.jsonl> <public key: the served JSON document or a PEM>")
  process.exit(2)
}

const hashOf = (prev, e) => sha256Hex(canonical(["svc-log-chain-v1", prev, e.key, e.seq, e.firstSeq, e.type, e.at, e.commandId, e.actor, e.payload]))

const claimBytes = (c) => Buffer.from(canonical(["svc-log-checkpoint-v1", c.partition, c.offset, c.head, c.at]), "utf8")

const publicKey = publicKeyFrom(readFileSync(keyFile, "utf8"))

const failures = []
const fail = (line, message) => failures.push(`line ${line}: ${message}`)

const lines = readFileSync(exportFile, "utf8").split("\n").filter((l) => l.trim() !== "")
let header
const partitions = new Map()
lines.forEach((text, i) => {
  const line = i + 1
  let entry
  try {
    entry = JSON.parse(text)
  } catch {
    return fail(line, "not JSON")
  }
  if (i === 0) {
    if (entry.type !== "audit-export") fail(line, "the first line is not the export's header")
    header = entry
    return
  }
  const p = partitions.get(entry.partition) ?? { last: undefined, hashes: new Map(), events: [], coveredThrough: -1 }
  partitions.set(entry.partition, p)
  const where = `partition ${entry.partition} offset ${entry.offset}`
  if (p.last !== undefined && !(entry.offset > p.last.offset)) fail(line, `${where}: offsets go backwards`)
  if (p.last !== undefined && entry.prev !== p.last.hash) fail(line, `${where}: does not chain onto the entry before it (offset ${p.last.offset})`)
  if (typeof entry.hash !== "string" || typeof entry.prev !== "string") fail(line, `${where}: carries no hashes`)
  if (entry.type === "event" || entry.type === "checkpoint") {
    if (hashOf(entry.prev, entry.event) !== entry.hash) fail(line, `${where}: its content does not match its hash (edited)`)
  } else if (entry.type !== "link") {
    fail(line, `${where}: unknown entry type ${entry.type}`)
  }
  if (entry.type === "checkpoint") {
    const claim = entry.event.payload
    let signed = false
    try {
      signed = verify(null, claimBytes(claim), publicKey, Buffer.from(claim.signature, "base64url"))
    } catch {}
    if (!signed) fail(line, `${where}: the checkpoint's signature is not the key's`)
    else if (claim.partition !== entry.partition || p.hashes.get(claim.offset) !== claim.head) {
      fail(line, `${where}: the checkpoint names offset ${claim.offset} with a hash the export does not hold there`)
    } else p.coveredThrough = Math.max(p.coveredThrough, claim.offset)
  }
  if (entry.type === "event") p.events.push({ line, offset: entry.offset })
  p.hashes.set(entry.offset, entry.hash)
  p.last = entry
})

let events = 0
for (const [partition, p] of partitions) {
  for (const e of p.events) {
    events++
    if (e.offset > p.coveredThrough) fail(e.line, `partition ${partition} offset ${e.offset}: no signed checkpoint covers this event`)
  }
}

if (failures.length > 0) {
  console.error(`the export does NOT verify (${failures.length} failures):`)
  for (const f of failures.slice(0, 20)) console.error(`  ${f}`)
  process.exit(1)
}
console.log(`verified: ${events} events of organization ${header?.orgId} from ${header?.from} to ${header?.to}, in ${partitions.size} partitions, each covered by a signed checkpoint`)
