/**
 * What the offline checks of docs/audit.md share (scripts/verify-audit-export.mjs,
 * scripts/verify-receipt.mjs): canonical JSON and the platform's public key. Nothing but Node:
 * it imports nothing from the platform, so that an auditor can check with these files alone.
 */
import { createHash, createPublicKey } from "node:crypto"

/** JSON with object keys sorted by UTF-16 code units, no whitespace (docs/audit.md). */
export const canonical = (value) => {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null"
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : canonical(v))).join(",")}]`
  const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort()
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`
}

export const sha256Hex = (text) => createHash("sha256").update(text, "utf8").digest("hex")

/** The public key from the document `GET /.well-known/svc-audit-key` serves (JSON), or from a PEM. */
export const publicKeyFrom = (keyText) =>
  keyText.trimStart().startsWith("{")
    ? createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: JSON.parse(keyText).publicKey }, format: "jwk" })
    : createPublicKey(keyText)

/** A key's id: the first 16 hex digits of SHA-256 of its raw 32-byte public key. */
export const keyIdOf = (publicKey) =>
  createHash("sha256").update(Buffer.from(publicKey.export({ format: "jwk" }).x, "base64url")).digest("hex").slice(0, 16)
