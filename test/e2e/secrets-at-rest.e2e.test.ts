/**
 * No plaintext secret at rest (issue 13, spec 2.9): secrets sealed and opened by a node's envelope
 * (AES-256-GCM under AUTH_TOKEN_ENCRYPTION_KEY, label mcp_cred_v1) show in no table, no event on the
 * log and no log line, even at debug level and when an envelope fails to open; the scan itself
 * finds a value planted in all three. Without a master key, sealing is refused with a clear reason.
 */
import { Effect, Either, Runtime } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Envelope, MCP_CREDENTIAL_KEY_ID } from "../../src/marketplace/Envelope.ts"
import { notifyReauth } from "../../src/marketplace/Notify.ts"
import { bootstrapPlace } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { findPlaintext } from "../support/secretScan.ts"

let node: TestNode
const lines: Array<string> = []

beforeAll(async () => {
  node = await startTestNode(
    { authTokenEncryptionKey: randomBytes(32), logging: { level: "debug", format: "json" } },
    { logSink: (line) => lines.push(line) }
  )
}, 60_000)
afterAll(async () => node?.stop())

// the node's runtime holds every service of the app; its type names none
const inNode = <A, E>(target: TestNode, effect: Effect.Effect<A, E, any>) => Runtime.runPromise(target.runtime)(effect as Effect.Effect<A, E>)
const run = <A, E>(effect: Effect.Effect<A, E, Envelope>) => inNode(node, Effect.either(effect))

describe("secrets at rest", () => {
  it("leave no plaintext in any table, log event or log line", async () => {
    const secrets = [`sk_live_${randomUUID()}`, `oauth-access-${randomUUID()}`, `oauth-refresh-${randomUUID()}`]
    for (const [index, secret] of secrets.entries()) {
      const context = `mcrd_scan:${index}`
      const sealed = await run(Effect.flatMap(Envelope, (envelope) => envelope.seal(secret, context)))
      if (Either.isLeft(sealed)) throw new Error(sealed.left.message)
      expect(sealed.right.keyId).toBe(MCP_CREDENTIAL_KEY_ID)
      expect(await run(Effect.flatMap(Envelope, (envelope) => envelope.open(sealed.right.ciphertext, sealed.right.keyId, context)))).toEqual(Either.right(secret))
      // a value opened in the wrong place fails without saying what it held
      const misplaced = await run(Effect.flatMap(Envelope, (envelope) => envelope.open(sealed.right.ciphertext, sealed.right.keyId, "mcrd_other:0")))
      expect(Either.isLeft(misplaced) && misplaced.left.message).not.toContain(secret)
    }
    // the node did work meanwhile (notices on the log and in the read models, request lines)
    const place = await bootstrapPlace(node)
    await inNode(node, notifyReauth({
      orgId: place.orgId,
      workspaceId: place.workspaceId,
      listingId: "porg_scan",
      listingName: "Scanned",
      orgSlug: node.bootstrap.orgSlug
    }))
    expect(await findPlaintext(node, secrets, lines)).toEqual([])
  })

  it("the scan finds a value planted in a table, an event on the log and a log line", async () => {
    const planted = `planted-${randomUUID()}`
    const place = await bootstrapPlace(node)
    await inNode(node, notifyReauth({
      orgId: place.orgId,
      workspaceId: place.workspaceId,
      listingId: "porg_planted",
      listingName: planted,
      orgSlug: node.bootstrap.orgSlug
    }))
    await inNode(node, Effect.logInfo(`careless line with ${planted}`))
    const where = (await findPlaintext(node, [planted], lines)).map((s) => s.where.split(" ").slice(0, 2).join(" "))
    expect(where).toContain("table notifications")
    expect(where).toContain("log event")
    expect(where).toContain("log line")
  })
})

describe("no master key", () => {
  it("refuses to seal, with a reason naming the setting", async () => {
    const bare = await startTestNode()
    try {
      const sealed = await inNode(bare, Effect.either(Effect.flatMap(Envelope, (envelope) => envelope.seal("a secret", "c"))))
      expect(Either.isLeft(sealed) && sealed.left).toMatchObject({ _tag: "EncryptionNotConfigured" })
      expect(Either.isLeft(sealed) && sealed.left.message).toMatch(/AUTH_TOKEN_ENCRYPTION_KEY/)
      // a row with no key id reads as null
      const opened = await inNode(bare, Effect.flatMap(Envelope, (envelope) => envelope.open(null, null, "c")))
      expect(opened).toBeNull()
    } finally {
      await bare.stop()
    }
  })
})
