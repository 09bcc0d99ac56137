/**
 * The checkpoint's fast path on a real node (real Postgres, embedded log): a caller seen a moment
 * ago, by key or by session cookie, is resolved and authorized without one query; callers of a
 * cold key arriving together share one query per read; and on this node a revoked key or an ended
 * session stops at its next request although it was cached.
 */
import { Effect, Runtime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AccessCache, ACCESS_TTL_MS } from "../../src/checkpoint/AccessCache.ts"
import { invoke } from "../../src/checkpoint/Checkpoint.ts"
import { call } from "../support/http.ts"
import { addPerson, callWithCookie, signIn } from "../support/people.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { caughtUp } from "../support/projection.ts"

let node: TestNode
let ownerCookie: string

/** Reads of what the checkpoint consults: credentials, places, memberships, settings, roles. */
const ACCESS_READ = /^\s*select\b[\s\S]*\."(api_keys|sessions|organizations|workspaces|org_settings|org_members|workspace_members|user_credentials|sso_identities|sso_providers|custom_roles)"/i

interface Sent {
  readonly query: string
  readonly parameters: ReadonlyArray<unknown>
}

/** The access reads the node sent to Postgres while `during` ran. */
const accessReadsDuring = async (during: () => Promise<void>): Promise<ReadonlyArray<Sent>> => {
  const sent: Array<Sent> = []
  node.db.sql.options.debug = (_connection, query, parameters) => {
    if (ACCESS_READ.test(query)) sent.push({ query, parameters })
  }
  try {
    await during()
  } finally {
    node.db.sql.options.debug = false
  }
  return sent
}

/** Runs an effect on the node's runtime, which provides every service the checkpoint needs. */
const onNode = <A>(effect: Effect.Effect<A, unknown, any>): Promise<A> => Runtime.runPromise(node.runtime)(effect as Effect.Effect<A, unknown, never>)

/** A person added through the actors, signed in once the read models hold them. */
const signedIn = async (name: string, role: "owner" | "member") => {
  const person = await addPerson(node, name, { org: role })
  await onNode(caughtUp(node.db))
  const session = await signIn(node.baseUrl, person)
  expect(session.status).toBe(200)
  return session.cookie
}

const ping = (credential: { readonly key: string } | { readonly cookie: string }) =>
  "key" in credential
    ? call(node.baseUrl, credential.key, "/v1/acme/main/system/ping", {})
    : callWithCookie(node.baseUrl, credential.cookie, "/v1/acme/main/system/ping", {})

const newKey = async (name: string) => {
  const created = await callWithCookie(node.baseUrl, ownerCookie, "/v1/acme/main/create_api_key", { name })
  expect(created.status, JSON.stringify(created.body)).toBe(200)
  return { raw: created.body.rawKey as string, publicId: created.body.publicId as string }
}

/**
 * Warms the caller with one request on a cache emptied first, then sends `burst` more at once and
 * returns the access reads they made; again (up to three times) when the machine was so slow that
 * the warm entries reached the age at which they are renewed before the burst was done.
 */
const readsOfWarmCaller = async (credential: Parameters<typeof ping>[0], burst: number) => {
  for (let attempt = 1; ; attempt++) {
    await onNode(Effect.flatMap(AccessCache, (cache) => Effect.sync(cache.invalidateAll)))
    const warmed = performance.now()
    expect((await ping(credential)).status).toBe(200)
    const reads = await accessReadsDuring(async () => {
      const replies = await Promise.all(Array.from({ length: burst }, () => ping(credential)))
      expect(replies.map((r) => r.status)).toEqual(Array(burst).fill(200))
    })
    if (performance.now() - warmed < ACCESS_TTL_MS / 2 || attempt === 3) return reads
  }
}

beforeAll(async () => {
  node = await startTestNode()
  ownerCookie = await signedIn("cache_owner", "owner")
})

afterAll(async () => {
  await node?.stop()
})

describe("the checkpoint's fast path", () => {
  it("resolves a key it saw a moment ago with no query", async () => {
    expect(await readsOfWarmCaller({ key: node.bootstrap.workspaceKey }, 20)).toEqual([])
  })

  it("resolves a session it saw a moment ago with no query", async () => {
    expect(await readsOfWarmCaller({ cookie: ownerCookie }, 20)).toEqual([])
  })

  it("looks each read up once for 32 requests of a cold key arriving together", async () => {
    const key = await newKey("cold")
    const lookupId = key.raw.slice("svc_".length, "svc_".length + 16)
    const reads = await accessReadsDuring(async () => {
      const together = Effect.all(
        Array.from({ length: 32 }, () =>
          invoke({ authorization: `Bearer ${key.raw}`, surface: "api", capability: "system.ping", path: { orgSlug: "acme", workspaceSlug: "main" }, input: Effect.succeed({}) })),
        { concurrency: "unbounded" }
      )
      const replies = await onNode(together)
      expect(replies).toEqual(Array(32).fill({ pong: true }))
    })
    expect(reads.filter((r) => r.parameters.includes(lookupId))).toHaveLength(1)
    // the key, the slugs of its place, the place the path names, the access facts: once each at most
    const counts = new Map<string, number>()
    for (const { query } of reads) counts.set(query, (counts.get(query) ?? 0) + 1)
    expect([...counts.values()].every((n) => n === 1), JSON.stringify([...counts])).toBe(true)
    expect(counts.size).toBeLessThanOrEqual(4)
  })

  it("refuses a cached key at once once it is revoked on this node", async () => {
    const key = await newKey("soon revoked")
    expect((await ping({ key: key.raw })).status).toBe(200)
    const revoked = await callWithCookie(node.baseUrl, ownerCookie, "/v1/acme/main/api-keys/revoke", { keyPublicId: key.publicId }, "DELETE")
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200)
    const refused = await ping({ key: key.raw })
    expect(refused.status).toBe(401)
    expect(refused.body.error.reason).toBe("invalid_credential")
  })

  it("refuses a cached session at once once it signs out on this node", async () => {
    const cookie = await signedIn("leaver", "member")
    expect((await ping({ cookie })).status).toBe(200)
    const out = await callWithCookie(node.baseUrl, cookie, "/v1/auth/sign-out", {})
    expect(out.status).toBe(200)
    const refused = await ping({ cookie })
    expect(refused.status).toBe(401)
    expect(refused.body.error.reason).toBe("invalid_credential")
  })
})
