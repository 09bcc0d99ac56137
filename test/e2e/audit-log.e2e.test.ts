/**
 * The tamper-evident log on a running node (embedded log): the node signs checkpoints, serves its
 * public key, and `svc audit verify` checks the log with that key alone; a checkpoint signed with
 * another key is found at its partition and offset.
 */
import { Effect, Runtime } from "effect"
import { generateKeyPairSync } from "node:crypto"
import { execFile } from "node:child_process"
import { writeFile } from "node:fs/promises"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeSigner } from "../../streams/Checkpoints.ts"
import { EventLog } from "../../streams/EventLog.ts"
import { verifyLog } from "../../streams/LogVerify.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import { runCli } from "../support/cli.ts"
import { addPerson, callWithCookie, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { call, eventually, send } from "./client.ts"

let node: TestNode

beforeAll(async () => {
  node = await startTestNode({ audit: { signingKey: undefined, checkpointEvents: 5, checkpointSeconds: 1 } })
})

afterAll(async () => {
  await node?.stop()
})

interface KeyDocument {
  readonly algorithm: string
  readonly keyId: string
  readonly publicKey: string
  readonly pem: string
}

const run = <A, E>(effect: Effect.Effect<A, E, EventLog>) => Runtime.runPromise(node.runtime as Runtime.Runtime<EventLog>)(effect)

const verifyExport = (exportFile: string, keyFile: string) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, ["scripts/verify-audit-export.mjs", exportFile, keyFile], (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr }))
  })

describe("audit.export", () => {
  it("exports the organization's trail with its proof; the standalone script verifies it, and refuses it with one line edited", async () => {
    const owner = await addPerson(node, "exporter", { org: "owner" })
    const session = await signIn(node.baseUrl, owner)
    const as = (capability: string, input: unknown) => callWithCookie(node.baseUrl, session.cookie, `/v1/acme/main/${capability}`, input)
    const from = new Date(Date.now() - 60_000).toISOString()
    for (let i = 0; i < 6; i++) expect((await call(node, "system.ping", {})).status).toBe(200)
    const to = new Date(Date.now() + 60_000).toISOString()
    // the last records are covered once their partition's next checkpoint is written (each second here)
    const exported = await eventually(() => as("audit/export", { from, to }), (r) => r.status === 200 && r.body.events >= 6 && r.body.uncovered === 0, 10_000)
    expect(exported.body.checkpoints).toBeGreaterThan(0)
    const lines = (exported.body.jsonl as string).trim().split("\n").map((l) => JSON.parse(l))
    expect(lines[0]).toMatchObject({ type: "audit-export", orgId: expect.any(String), from, to })
    const pings = lines.filter((l) => l.type === "event" && l.event.type === "capability.invoked" && l.event.payload.capability === "system.ping")
    expect(pings.length).toBeGreaterThanOrEqual(6)
    for (const ping of pings) expect(ping).toMatchObject({ partition: expect.any(Number), offset: expect.any(Number), hash: expect.stringMatching(/^[0-9a-f]{64}$/) })

    const served = await send<KeyDocument>(node, "/.well-known/svc-audit-key")
    const keyFile = path.join(node.config.dataDir, "export-key.json")
    const exportFile = path.join(node.config.dataDir, "export.jsonl")
    await writeFile(keyFile, JSON.stringify(served.body))
    await writeFile(exportFile, exported.body.jsonl)
    const verified = await verifyExport(exportFile, keyFile)
    expect(verified.code, verified.stderr).toBe(0)
    expect(verified.stdout).toMatch(/^verified: \d+ events/)

    // one line edited: a ping that failed, by the look of it
    const edited = (exported.body.jsonl as string).split("\n")
    const at = edited.findIndex((l) => l.includes('"system.ping"') && l.includes('"type":"event"'))
    edited[at] = edited[at].replace('"outcome":"succeeded"', '"outcome":"failed"')
    expect(edited[at]).toContain('"outcome":"failed"')
    await writeFile(exportFile, edited.join("\n"))
    const refused = await verifyExport(exportFile, keyFile)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(`line ${at + 1}: partition`)
    expect(refused.stderr).toContain("does not match its hash (edited)")
  })
})

describe("the log's signed checkpoints", () => {
  it("are made as the node writes, verify with the served public key, and a checkpoint signed otherwise is found", async () => {
    const served = await send<KeyDocument>(node, "/.well-known/svc-audit-key")
    expect(served.status).toBe(200)
    expect(served.body).toMatchObject({ algorithm: "Ed25519", keyId: expect.stringMatching(/^[0-9a-f]{16}$/), publicKey: expect.any(String) })
    const keyFile = path.join(node.config.dataDir, "served-audit-key.json")
    await writeFile(keyFile, JSON.stringify(served.body))

    for (let i = 0; i < 12; i++) expect((await call(node, "system.ping", {})).status).toBe(200)
    // every 5 events, or each second: some partition has a checkpoint soon
    const reports = await eventually(() => run(verifyLog()), (rs) => rs.some((r) => r.checkpoints > 0), 10_000)
    expect(reports.filter((r) => r.break !== undefined)).toEqual([])

    const intact = await runCli(node, ["audit", "verify", "--key", keyFile])
    expect(intact.code, intact.stdout + intact.stderr).toBe(0)
    expect(intact.stdout).toMatch(/[1-9]\d* checkpoints/)

    // a checkpoint signed with a key that is not the operator's, appended like any record
    const { privateKey } = generateKeyPairSync("ed25519")
    const forger = makeSigner(privateKey, { events: 1, seconds: 1 })
    const key = `log-checkpoint:forged`
    const partition = partitionFor(key, node.config.partitions)
    const [offset] = await run(Effect.flatMap(EventLog, (log) =>
      Effect.flatMap(log.endOffsets([partition]), (ends) => {
        const record = forger.record({ partition, offset: ends.get(partition)! - 1, head: "0".repeat(64), at: new Date().toISOString() })
        return log.append(key, [{ ...record, key }])
      })
    ))
    const broken = await runCli(node, ["audit", "verify", "--key", keyFile])
    expect(broken.code).toBe(1)
    expect(broken.stdout).toContain(`partition ${partition}:`)
    expect(broken.stderr).toContain(`partition ${partition} offset ${offset}: the checkpoint's signature`)
  })
})
