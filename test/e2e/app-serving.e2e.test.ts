/**
 * The gateway serves the built web app (gateway/app.ts): index.html for every app route, never
 * cached; hashed assets cached for a year, gzipped for clients that take it; API paths keep their
 * JSON 404. Browser behaviour is in test/app/.
 */
import { mkdtemp } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { assertAppBuilt } from "../support/browser.ts"
import { startTestNode, type TestNode } from "../support/platform.ts"
import { expectError, send } from "./client.ts"

let node: TestNode

beforeAll(async () => {
  assertAppBuilt()
  node = await startTestNode()
})
afterAll(async () => {
  await node?.stop()
})

const get = (url: string, headers: Record<string, string> = {}) => fetch(`${node.baseUrl}${url}`, { headers })

describe("the web app", () => {
  it("answers / and every app route (deep links included) with index.html, revalidated on each load, under a strict CSP", async () => {
    const root = await get("/")
    const html = await root.text()
    expect(root.status).toBe(200)
    expect(root.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(html).toContain('<div id="root"></div>')
    for (const route of ["/acme/main/chat", "/acme/main/settings/integrations/reauth/porg_x", "/device?user_code=ABCD-EFGH", "/sign-in"]) {
      const page = await get(route)
      expect(page.status, route).toBe(200)
      expect(page.headers.get("cache-control"), route).toBe("no-cache")
      expect(await page.text(), route).toBe(html)
    }
    const csp = root.headers.get("content-security-policy") ?? ""
    expect(csp).toContain("default-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toContain("script-src")
  })

  it("serves the hashed assets index.html names, immutable for a year, gzipped when asked", async () => {
    const html = await (await get("/")).text()
    const scripts = [...html.matchAll(/src="(\/assets\/[^"]+\.js)"/g)].map((m) => m[1])
    expect(scripts.length).toBe(1)
    const plain = await get(scripts[0], { "accept-encoding": "identity" })
    expect(plain.status).toBe(200)
    expect(plain.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect(plain.headers.get("content-encoding")).toBeNull()
    const body = Buffer.from(await plain.arrayBuffer())

    // undici decodes gzip by itself: read the raw bytes with a plain socket-level request instead
    const { request } = await import("node:http")
    const gz = await new Promise<{ encoding: string | undefined; bytes: Buffer }>((resolve, reject) => {
      request(`${node.baseUrl}${scripts[0]}`, { headers: { "accept-encoding": "gzip, br" } }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => resolve({ encoding: res.headers["content-encoding"], bytes: Buffer.concat(chunks) }))
      })
        .on("error", reject)
        .end()
    })
    expect(gz.encoding).toBe("gzip")
    expect(gz.bytes.length).toBeLessThan(body.length / 2)
    expect(gunzipSync(gz.bytes).equals(body)).toBe(true)
  })

  it("keeps API paths and missing assets JSON 404s", async () => {
    expectError(await send(node, "/v1/acme/main/nothing-here", { method: "GET" }), 404, "not_found", "route_not_found")
    expectError(await send(node, "/assets/missing-0000.js"), 404, "not_found", "route_not_found")
    expectError(await send(node, "/.well-known/nothing"), 404, "not_found", "route_not_found")
  })

  it("says how to build the app when a node has none, instead of a blank page", async () => {
    const bare = await startTestNode({ appDir: await mkdtemp(path.join(tmpdir(), "svc-no-app-")) })
    try {
      const page = await fetch(`${bare.baseUrl}/acme/main/chat`)
      expect(page.status).toBe(404)
      expect(await page.text()).toContain("npm run build:app")
    } finally {
      await bare.stop()
    }
  })
})
