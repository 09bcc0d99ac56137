import { generateKeyPairSync, verify } from "node:crypto"
import { mkdtemp, rm, stat } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { canonicalCard, loadCardSigningKey, makeCardSigner } from "../../src/a2a/CardSignature.ts"

const dirs: Array<string> = []
const dataDir = async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "svc-card-key-"))
  dirs.push(dir)
  return dir
}
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))))

const kidOf = (key: Parameters<typeof makeCardSigner>[0]) => makeCardSigner(key).jwks.keys[0]!.kid

describe("the agent card's signing key", () => {
  it("unset: made on first start in the data directory, owner-only, and the same key after a restart", async () => {
    const dir = await dataDir()
    const first = await loadCardSigningKey(undefined, dir)
    expect((await stat(path.join(dir, "a2a-card-signing.pem"))).mode & 0o777).toBe(0o600)
    expect(kidOf(await loadCardSigningKey(undefined, dir))).toBe(kidOf(first))
    expect(kidOf(await loadCardSigningKey(undefined, await dataDir()))).not.toBe(kidOf(first))
  })

  it("A2A_CARD_SIGNING_KEY as PKCS#8 PEM or as a JWK: that key, whatever the data directory holds", async () => {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" })
    const pem = privateKey.export({ format: "pem", type: "pkcs8" }).toString()
    const jwk = JSON.stringify(privateKey.export({ format: "jwk" }))
    expect(kidOf(await loadCardSigningKey(pem, await dataDir()))).toBe(kidOf(privateKey))
    expect(kidOf(await loadCardSigningKey(jwk, await dataDir()))).toBe(kidOf(privateKey))
  })

  it("a key ES256 cannot use is refused at start", async () => {
    const { privateKey } = generateKeyPairSync("ed25519")
    await expect(loadCardSigningKey(privateKey.export({ format: "pem", type: "pkcs8" }).toString(), await dataDir())).rejects.toThrow("EC P-256")
  })
})

describe("the card's signature", () => {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" })
  const signer = makeCardSigner(privateKey)
  const verifies = (signed: { readonly signatures: ReadonlyArray<{ protected: string; signature: string }>; readonly [field: string]: unknown }) => {
    const [{ protected: header, signature }] = signed.signatures
    const input = `${header}.${Buffer.from(canonicalCard(signed), "utf8").toString("base64url")}`
    return verify("sha256", Buffer.from(input), { key: publicKey, dsaEncoding: "ieee-p1363" }, Buffer.from(signature, "base64url"))
  }

  it("is made once per card and base URL: the same card is answered with the same signature, a changed one with a new one", () => {
    const card = { name: "svc", version: "1", skills: [{ id: "chat", name: "Chat" }] }
    const first = signer.sign(card, "http://127.0.0.1:1")
    // ECDSA draws a fresh nonce per signature: equal signatures mean the first was kept
    expect(signer.sign({ ...card }, "http://127.0.0.1:1").signatures).toEqual(first.signatures)
    const renamed = signer.sign({ ...card, name: "svc 2" }, "http://127.0.0.1:1")
    const moved = signer.sign(card, "http://127.0.0.1:2")
    expect(renamed.signatures[0]!.signature).not.toBe(first.signatures[0]!.signature)
    expect(moved.signatures[0]!.protected).not.toBe(first.signatures[0]!.protected)
    for (const signed of [first, renamed, moved]) expect(verifies(signed)).toBe(true)
    expect(verifies({ ...renamed, name: "svc" })).toBe(false)
  })
})
