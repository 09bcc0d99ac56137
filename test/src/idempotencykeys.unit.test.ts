/**
 * What makes two requests under one `Idempotency-Key` the same request: their digest
 * (src/checkpoint/IdempotencyKeys.ts), over the place and the input as the capability decoded it.
 */
import { describe, expect, it } from "vitest"
import { requestDigest } from "../../src/checkpoint/IdempotencyKeys.ts"

const place = { orgId: "org_1", workspaceId: "wsp_1" }
const sent = (input: unknown, at = place) => ({ ...at, input })

describe("requestDigest", () => {
  it("is the same however the body wrote its keys, and with an undefined field left out", () => {
    const digest = requestDigest(sent({ label: "Item", properties: { title: "A", done: false } }))
    expect(requestDigest(sent({ properties: { done: false, title: "A" }, label: "Item" }))).toBe(digest)
    expect(requestDigest(sent({ label: "Item", properties: { title: "A", done: false }, cursor: undefined }))).toBe(digest)
  })

  it("hashes bytes as bytes, wherever their buffer starts", () => {
    const bytes = new TextEncoder().encode("hello")
    const offset = Buffer.from("__hello").subarray(2)
    expect(requestDigest(sent({ files: [{ name: "a.txt", bytes }] }))).toBe(requestDigest(sent({ files: [{ name: "a.txt", bytes: offset }] })))
  })

  const base = { label: "Item", properties: { title: "A", done: false } }
  const file = (text: string) => ({ files: [{ name: "a.txt", bytes: new TextEncoder().encode(text) }] })
  const differences: ReadonlyArray<readonly [string, unknown, unknown]> = [
    ["another value", sent(base), sent({ ...base, label: "Other" })],
    ["another type of the same text", sent(base), sent({ ...base, properties: { title: "A", done: "false" } })],
    ["a field more", sent(base), sent({ ...base, properties: { ...base.properties, estimate: 3 } })],
    ["a null for a missing field", sent(base), sent({ ...base, cursor: null })],
    ["another workspace", sent(base), sent(base, { orgId: "org_1", workspaceId: "wsp_2" })],
    ["an array for an object with the same entries", sent(base), sent({ ...base, properties: ["title", "A", "done", false] })],
    ["a key and a value run together", sent({ ...base, properties: { title: "\"A", done: false } }), sent({ ...base, properties: { "title\"": "A", done: false } })],
    ["other bytes of the same length", sent(file("hello")), sent(file("hellp"))],
    ["lone surrogates that UTF-8 would merge", sent({ ...base, label: "\ud800" }), sent({ ...base, label: "\udc00" })]
  ]
  it.each(differences)("differs for %s", (_, one, other) => expect(requestDigest(one)).not.toBe(requestDigest(other)))
})
