import { describe, expect, it } from "vitest"
import { mintApiKey, newPublicId, parseBearer, verifySecret } from "../../src/identity/ApiKeyToken.ts"

describe("ApiKeyToken", () => {
  it("mints svc_ keys of 48 random bytes in base64url, with the lookup id as their first 12", () => {
    const { raw, lookupId } = mintApiKey()
    expect(raw).toMatch(/^svc_[A-Za-z0-9_-]{64}$/)
    const bytes = Buffer.from(raw.slice(4), "base64url")
    expect(bytes).toHaveLength(48)
    expect(Buffer.from(lookupId, "base64url")).toEqual(bytes.subarray(0, 12))
  })

  it("mints a different key, lookup id and hash every time", () => {
    const [a, b] = [mintApiKey(), mintApiKey()]
    expect(a.raw).not.toBe(b.raw)
    expect(a.lookupId).not.toBe(b.lookupId)
    expect(a.secretHash).not.toBe(b.secretHash)
  })

  it("verifies a key against its hash only", () => {
    const key = mintApiKey()
    expect(verifySecret(key.raw, key.secretHash)).toBe(true)
    expect(verifySecret(mintApiKey().raw, key.secretHash)).toBe(false)
    const tampered = key.raw.slice(0, -1) + (key.raw.endsWith("A") ? "B" : "A")
    expect(verifySecret(tampered, key.secretHash)).toBe(false)
    expect(verifySecret(key.raw, "")).toBe(false)
    expect(verifySecret(key.raw, key.secretHash.slice(0, 20))).toBe(false)
  })

  describe("parseBearer", () => {
    const { raw, lookupId } = mintApiKey()

    it.each([`Bearer ${raw}`, `bearer ${raw}`, `BEARER  ${raw}`, `  Bearer ${raw}  `])("reads '%s'", (header) =>
      expect(parseBearer(header)).toEqual({ _tag: "Token", raw, lookupId }))

    it.each([undefined, "", "   "])("finds %o missing", (header) => expect(parseBearer(header)).toEqual({ _tag: "Missing" }))

    it.each([
      ["no token", "Bearer"],
      ["no scheme", raw],
      ["another scheme", `Basic ${raw}`],
      ["another prefix", `Bearer sk_${raw.slice(4)}`],
      ["a short key", `Bearer ${raw.slice(0, -1)}`],
      ["a long key", `Bearer ${raw}A`],
      ["a character outside base64url", `Bearer ${raw.slice(0, -1)}+`],
      ["padding", `Bearer ${raw.slice(0, -1)}=`],
      ["a second token", `Bearer ${raw} ${raw}`],
      ["a tab for a space", `Bearer\t${raw}`]
    ])("finds %s malformed", (_, header) => expect(parseBearer(header)).toEqual({ _tag: "Malformed" }))
  })

  describe("newPublicId", () => {
    it("joins the prefix to 16 random bytes in hex", () => {
      expect(newPublicId("aky")).toMatch(/^aky_[0-9a-f]{32}$/)
      expect(newPublicId("mreg")).toMatch(/^mreg_[0-9a-f]{32}$/)
      expect(newPublicId("org")).not.toBe(newPublicId("org"))
    })

    it.each(["", "aky_", "Aky", "1ab"])("refuses the prefix '%s'", (prefix) => expect(() => newPublicId(prefix)).toThrow())
  })
})
