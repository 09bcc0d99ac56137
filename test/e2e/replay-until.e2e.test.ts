/**
 * Point-in-time replay (`svc replay --until`): the read models rebuilt as they stood at a past
 * moment, into a schema of their own, the live ones untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runCli } from "../support/cli.ts"
import { addPerson, callWithCookie, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { uniqueName } from "../support/env.ts"
import { sleep } from "./client.ts"

let node: TestNode

beforeAll(async () => {
  node = await startTestNode()
})

afterAll(async () => {
  await node?.stop()
})

const statusIn = async (schema: string, name: string) => {
  const [row] = await node.db.sql`select status from ${node.db.sql(schema)}.api_keys where name = ${name}`
  return row?.status as string | undefined
}

describe("svc replay --until", () => {
  it("shows a key revoked later as still active at an earlier time, or log position, and leaves the live read models alone", async () => {
    const owner = await addPerson(node, "auditee", { org: "owner" })
    const session = await signIn(node.baseUrl, owner)
    const as = (path: string, input: unknown, method = "POST") => callWithCookie(node.baseUrl, session.cookie, `/v1/acme/main/${path}`, input, method)
    const created = await as("create_api_key", { name: "revoked later" })
    expect(created.status).toBe(200)
    await sleep(50)
    const before = new Date().toISOString()
    await sleep(50)
    expect((await as("api-keys/revoke", { keyPublicId: created.body.publicId }, "DELETE")).status).toBe(200)
    expect(await statusIn(node.config.dbSchema, "revoked later")).toBe("revoked")

    const atTime = uniqueName("at")
    const replayed = await runCli(node, ["replay", "--until", before, "--into", atTime])
    expect(replayed.code, replayed.stderr).toBe(0)
    expect(await statusIn(atTime, "revoked later")).toBe("active")
    expect(await statusIn(node.config.dbSchema, "revoked later")).toBe("revoked")

    // by position: the log through where the key's creation landed, on its partition
    const [event] = await node.db.sql`
      select partition, "offset" from ${node.db.sql(`${node.config.dbSchema}_log`)}.log_events
      where type = 'api_key.created' and payload->>'name' = 'revoked later'`
    const atPosition = uniqueName("at")
    const byPosition = await runCli(node, ["replay", "--until", `${event.partition}:${event.offset}`, "--into", atPosition])
    expect(byPosition.code, byPosition.stderr).toBe(0)
    expect(await statusIn(atPosition, "revoked later")).toBe("active")

    const refused = await runCli(node, ["replay", "--until", "yesterday"])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("--until takes an RFC 3339 time")
  })
})
