/**
 * The lockout across a cluster (src/identity/Lockout.ts): two nodes on one Kafka cluster and one database,
 * each owning some partitions. Wrong passwords spread over both nodes count toward one lock, which
 * refuses the right password on either; guesses sent to both at once are counted exactly.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { kafkaBrokers, uniqueName } from "../support/env.ts"
import { addPerson } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"

const signIn = async (node: TestNode, email: string, password: string) => {
  const response = await fetch(`${node.baseUrl}/v1/auth/sign-in`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password })
  })
  const body: any = await response.json()
  return { status: response.status, reason: body.error?.reason as string | undefined, retryAfter: response.headers.get("retry-after") }
}

describe.skipIf(kafkaBrokers.length === 0)("the lockout on a cluster of two nodes", () => {
  const nodes: TestNode[] = []

  beforeAll(async () => {
    const shared = { dbSchema: uniqueName("t"), kafkaBrokers, topicPrefix: uniqueName("t"), kafkaSessionTimeoutMs: 3_000 }
    nodes.push(...(await Promise.all([startTestNode({ ...shared, nodeId: "lock-a" }), startTestNode({ ...shared, nodeId: "lock-b" })])))
    // each node decides for some partitions: a guard's key lands on one, the other routes to it
    const deadline = Date.now() + 60_000
    while (!nodes.every((n) => n.host.ownership().ready.length > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    expect(nodes.map((n) => n.host.ownership().ready.length > 0)).toEqual([true, true])
  }, 120_000)

  afterAll(() => Promise.all(nodes.map((n) => n.stop())))

  it("wrong passwords alternating between the nodes lock the account after five; the right one is then 429 on both", { timeout: 60_000 }, async () => {
    const [a, b] = nodes
    const person = await addPerson(a, "rosa", { org: "member" })
    const answers = []
    for (let i = 0; i < 5; i++) answers.push(await signIn(i % 2 === 0 ? a : b, person.email, `wrong-${i}`))
    expect(answers.map((r) => [r.status, r.reason])).toEqual([...Array(4).fill([401, "invalid_credential"]), [429, "too_many_attempts"]])
    for (const node of [a, b]) {
      const right = await signIn(node, person.email, person.password)
      expect([right.status, right.reason]).toEqual([429, "too_many_attempts"])
      expect(Number(right.retryAfter)).toBeGreaterThan(0)
    }
  })

  it("guesses sent to both nodes at once are counted exactly: four 401s, the rest 429", { timeout: 60_000 }, async () => {
    const [a, b] = nodes
    const person = await addPerson(a, "sami", { org: "member" })
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => signIn(i % 2 === 0 ? a : b, person.email, `burst-${i}`)))
    expect(answers.map((r) => r.status).sort()).toEqual([...Array(4).fill(401), ...Array(8).fill(429)])
  })
})
