/**
 * The tamper-evident log on a running node (embedded log): the node signs checkpoints, serves its
 * public key, and `svc audit verify` checks the log with that key alone; a checkpoint signed with
 * another key is found at its partition and offset.
 */
import { Effect, Runtime } from "effect"
import { generateKeyPairSync } from "node:crypto"
import { writeFile } from "node:fs/promises"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeSigner } from "../../streams/Checkpoints.ts"
import { EventLog } from "../../streams/EventLog.ts"
import { verifyLog } from "../../streams/LogVerify.ts"
import { partitionFor } from "../../streams/partitioner.ts"
import { runCli } from "../support/cli.ts"
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
