/**
 * What a registry answers is stored in the catalog and read back by every listing: JSON nested past
 * MAX_JSON_DEPTH is refused as a failed call, like an answer that is not JSON (src/platform/JsonDepth.ts).
 */
import { Effect, Either } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { listServers } from "../../src/marketplace/RegistryClient.ts"
import { makePolicy, OutboundPolicy, parseOutboundAllow } from "../../src/platform/Outbound.ts"

const deep = `{"servers":[{"server":${"[".repeat(1_000)}${"]".repeat(1_000)}}],"metadata":{}}`
const server = createServer((_, response) => response.writeHead(200, { "content-type": "application/json" }).end(deep))
let url: string

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

describe("a registry's answer", () => {
  it("nested past the depth bound is a failed call, not a page", async () => {
    const listed = await Effect.runPromise(
      listServers(url, { limit: 10 }).pipe(Effect.provideService(OutboundPolicy, makePolicy(parseOutboundAllow("127.0.0.1"))), Effect.either)
    )
    expect(Either.isLeft(listed) && listed.left).toMatchObject({ _tag: "RegistryCallFailed", message: expect.stringContaining("64 levels") })
  })
})
