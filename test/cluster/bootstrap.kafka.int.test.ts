/**
 * Operators start several nodes at once on a fresh database: they must make one organization
 * between them, and every node's bootstrap keys must work on every node.
 */
import { afterAll, describe, expect, it } from "vitest"
import { kafkaBrokers, uniqueName } from "../support/env.ts"
import { call } from "../support/http.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"

describe.skipIf(kafkaBrokers.length === 0)("nodes bootstrapping one fresh database together", () => {
  const nodes: TestNode[] = []
  afterAll(() => Promise.all(nodes.map((n) => n.stop())))

  it("share one organization, and each node's keys work everywhere", { timeout: 120_000 }, async () => {
    const shared = { dbSchema: uniqueName("t"), kafkaBrokers, topicPrefix: uniqueName("t"), kafkaSessionTimeoutMs: 3_000 }
    nodes.push(...(await Promise.all([
      startTestNode({ ...shared, nodeId: "boot-a" }),
      startTestNode({ ...shared, nodeId: "boot-b" })
    ])))
    const [a, b] = nodes
    expect(a.bootstrapped && b.bootstrapped).toBe(true)
    expect(a.bootstrap.workspaceKey).not.toBe(b.bootstrap.workspaceKey)

    const orgs = await a.db.sql`select org_id from ${a.db.table("organizations")} where slug = 'acme'`
    const workspaces = await a.db.sql`select workspace_id from ${a.db.table("workspaces")} where slug = 'main'`
    expect([orgs.length, workspaces.length]).toEqual([1, 1])

    for (const key of [a.bootstrap.workspaceKey, b.bootstrap.workspaceKey]) {
      for (const node of [a, b]) {
        const whoami = await call(node.baseUrl, key, "/v1/auth/whoami")
        expect(whoami.body).toMatchObject({ orgId: orgs[0].org_id, workspaceId: workspaces[0].workspace_id })
        expect((await call(node.baseUrl, key, "/v1/acme/main/node/list", {})).status).toBe(200)
      }
    }
  })
})
