/** The AES-256-GCM envelope of plugin secrets over the local key-management adapter (spec 2.9). */
import { Cause, Effect, Either } from "effect"
import { randomBytes } from "node:crypto"
import { describe, expect, it } from "vitest"
import { describeFailure } from "../../gateway/errors.ts"
import { EncryptionNotConfigured, EnvelopeUnreadable, localKeyManagement, makeEnvelope, MCP_CREDENTIAL_KEY_ID, noKeyManagement } from "../../src/marketplace/Envelope.ts"

const master = randomBytes(32)
const envelope = makeEnvelope(localKeyManagement(master), true)
const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runSync(Effect.either(effect))
const sealed = (plain: string, context: string) => Effect.runSync(envelope.seal(plain, context))

/** Flips one character of the envelope's part at `index` (0: version, 1: wrapped key, 2: iv, 3: body, 4: tag). */
const tamper = (ciphertext: string, index: number) => {
  const parts = ciphertext.split(".")
  const part = parts[index]!
  parts[index] = (part[0] === "A" ? "B" : "A") + part.slice(1)
  return parts.join(".")
}

describe("envelope", () => {
  it("round-trips a secret under the label mcp_cred_v1, and stores none of it in clear", () => {
    const secret = "sk_live_an-api-key-value-1234"
    const { ciphertext, keyId } = sealed(secret, "mcrd_1:secret")
    expect(keyId).toBe(MCP_CREDENTIAL_KEY_ID)
    expect(ciphertext).not.toContain(secret)
    expect(ciphertext).not.toContain(Buffer.from(secret).toString("base64"))
    expect(ciphertext).not.toContain(Buffer.from(secret).toString("base64url"))
    expect(run(envelope.open(ciphertext, keyId, "mcrd_1:secret"))).toEqual(Either.right(secret))
    expect(run(envelope.open(sealed("", "c").ciphertext, keyId, "c"))).toEqual(Either.right(""))
    expect(run(envelope.open(sealed("ünïcødé ✓", "c").ciphertext, keyId, "c"))).toEqual(Either.right("ünïcødé ✓"))
  })

  it("uses a fresh data key for every value: the same secret seals differently each time", () => {
    const a = sealed("same", "c").ciphertext
    const b = sealed("same", "c").ciphertext
    expect(a).not.toBe(b)
    expect(a.split(".")[1]).not.toBe(b.split(".")[1])
  })

  it("detects tampering with any part, and a value moved to another row or column", () => {
    const { ciphertext, keyId } = sealed("refresh-token-value", "mcrd_1:refresh_token")
    for (const index of [1, 2, 3, 4]) {
      const opened = run(envelope.open(tamper(ciphertext, index), keyId, "mcrd_1:refresh_token"))
      expect(Either.isLeft(opened) && opened.left._tag, `part ${index}`).toBe("EnvelopeUnreadable")
    }
    for (const context of ["mcrd_2:refresh_token", "mcrd_1:access_token"]) {
      const opened = run(envelope.open(ciphertext, keyId, context))
      expect(Either.isLeft(opened) && opened.left._tag, context).toBe("EnvelopeUnreadable")
    }
    const truncated = run(envelope.open(ciphertext.split(".").slice(0, 4).join("."), keyId, "mcrd_1:refresh_token"))
    expect(Either.isLeft(truncated) && truncated.left._tag).toBe("EnvelopeUnreadable")
  })

  it("does not open under another master key or another key label", () => {
    const { ciphertext, keyId } = sealed("access-token-value", "c")
    const other = makeEnvelope(localKeyManagement(randomBytes(32)), true)
    const opened = run(other.open(ciphertext, keyId, "c"))
    expect(Either.isLeft(opened) && opened.left).toMatchObject({ _tag: "EnvelopeUnreadable", keyId })
    const relabelled = run(envelope.open(ciphertext, "mcp_cred_v2", "c"))
    expect(Either.isLeft(relabelled) && relabelled.left._tag).toBe("EnvelopeUnreadable")
  })

  it("reads a row with no key id, or no ciphertext, as null", () => {
    const { ciphertext } = sealed("x", "c")
    expect(run(envelope.open(ciphertext, null, "c"))).toEqual(Either.right(null))
    expect(run(envelope.open(null, MCP_CREDENTIAL_KEY_ID, "c"))).toEqual(Either.right(null))
    expect(run(makeEnvelope(noKeyManagement, false).open(null, null, "c"))).toEqual(Either.right(null))
  })

  it("without a master key seals nothing: secret entry is refused with a clear error", () => {
    const none = makeEnvelope(noKeyManagement, false)
    expect(none.configured).toBe(false)
    const refused = run(none.seal("a secret", "c"))
    expect(Either.isLeft(refused) && refused.left._tag).toBe("EncryptionNotConfigured")
    expect(Either.isLeft(refused) && refused.left.message).toMatch(/AUTH_TOKEN_ENCRYPTION_KEY/)
  })

  it("is answered 409 with a reason on every surface", () => {
    expect(describeFailure(Cause.fail(new EncryptionNotConfigured()))).toMatchObject({ status: 409, code: "conflict", reason: "encryption_not_configured", message: expect.stringMatching(/AUTH_TOKEN_ENCRYPTION_KEY/) })
    expect(describeFailure(Cause.fail(new EnvelopeUnreadable({ keyId: MCP_CREDENTIAL_KEY_ID })))).toMatchObject({ status: 409, code: "conflict", reason: "credential_unreadable" })
  })

  it("refuses a master key that is not 256 bits", () => {
    expect(() => localKeyManagement(randomBytes(16))).toThrow(/32 bytes/)
  })
})
