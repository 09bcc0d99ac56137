/**
 * Encryption at rest of plugin secrets (spec 2.9): every secret is an AES-256-GCM envelope. Each
 * sealed value gets a fresh 256-bit data key; the data key is wrapped by the master key through the
 * key-management port, whose local adapter wraps with `AUTH_TOKEN_ENCRYPTION_KEY`. A row records the
 * label of the key that wrapped its data keys (`token_kms_key_id`, `mcp_cred_v1`), so a later
 * master key can sit beside this one. The log and the read models only ever see the envelope.
 *
 * An envelope is `v1.<wrapped data key>.<iv>.<ciphertext>.<tag>` (base64url parts). The caller's
 * context (e.g. `<credential id>:access_token`) is authenticated as additional data: a value copied
 * into another row or column does not open there.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"
import { Context, Effect, Layer, Schema } from "effect"

/** The key label of plugin credentials (spec 2.9). */
export const MCP_CREDENTIAL_KEY_ID = "mcp_cred_v1"

/** No master key is configured: nothing can be sealed, so no secret is accepted. */
export class EncryptionNotConfigured extends Schema.TaggedError<EncryptionNotConfigured>()("EncryptionNotConfigured", {}) {
  override get message() {
    return "secrets cannot be stored: the operator has not configured AUTH_TOKEN_ENCRYPTION_KEY"
  }
}

/** A stored envelope did not open: altered, from another row or column, or wrapped by another master key. */
export class EnvelopeUnreadable extends Schema.TaggedError<EnvelopeUnreadable>()("EnvelopeUnreadable", {
  keyId: Schema.String
}) {
  override get message() {
    return `a stored secret (key ${this.keyId}) cannot be decrypted with the configured master key`
  }
}

/**
 * The key-management port: wraps and unwraps data keys under a master key named by a label. A
 * cloud KMS adapter would call its service here; the local one holds the master key in memory.
 */
export interface KeyManagementService {
  /** The label new envelopes are wrapped under. */
  readonly currentKeyId: string
  readonly wrap: (dataKey: Buffer, keyId: string) => Effect.Effect<string, EncryptionNotConfigured>
  readonly unwrap: (wrapped: string, keyId: string) => Effect.Effect<Buffer, EncryptionNotConfigured | EnvelopeUnreadable>
}

export class KeyManagement extends Context.Tag("svc/KeyManagement")<KeyManagement, KeyManagementService>() {}

const VERSION = "v1"
const b64 = (bytes: Buffer) => bytes.toString("base64url")

/** AES-256-GCM: `<iv>.<ciphertext>.<tag>`. */
export const encrypt = (key: Buffer, plain: Buffer, aad: string): string => {
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(Buffer.from(aad, "utf8"))
  const body = Buffer.concat([cipher.update(plain), cipher.final()])
  return [b64(iv), b64(body), b64(cipher.getAuthTag())].join(".")
}

/** Undefined when the parts are malformed, altered, or sealed under another key or context. */
export const decrypt = (key: Buffer, parts: ReadonlyArray<string>, aad: string): Buffer | undefined => {
  const [iv, body, tag] = parts
  if (parts.length !== 3 || iv === undefined || body === undefined || tag === undefined) return undefined
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url")).setAAD(Buffer.from(aad, "utf8"))
    decipher.setAuthTag(Buffer.from(tag, "base64url"))
    return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()])
  } catch {
    return undefined
  }
}

/** The local adapter: the master key (32 bytes) wraps each data key with AES-256-GCM, the label as additional data. */
export const localKeyManagement = (masterKey: Buffer, keyId: string = MCP_CREDENTIAL_KEY_ID): KeyManagementService => {
  if (masterKey.length !== 32) throw new Error("the master key must be 32 bytes")
  return {
    currentKeyId: keyId,
    wrap: (dataKey, label) => Effect.sync(() => encrypt(masterKey, dataKey, label)),
    unwrap: (wrapped, label) => {
      const dataKey = label === keyId ? decrypt(masterKey, wrapped.split("."), label) : undefined
      return dataKey === undefined || dataKey.length !== 32 ? Effect.fail(new EnvelopeUnreadable({ keyId: label })) : Effect.succeed(dataKey)
    }
  }
}

/** No master key: wrapping is refused; a stored envelope cannot be opened either. */
export const noKeyManagement: KeyManagementService = {
  currentKeyId: MCP_CREDENTIAL_KEY_ID,
  wrap: () => Effect.fail(new EncryptionNotConfigured()),
  unwrap: () => Effect.fail(new EncryptionNotConfigured())
}

/** A value sealed for storage, with the key label its row records. */
export interface Sealed {
  readonly ciphertext: string
  readonly keyId: string
}

export interface EnvelopeService {
  /** Whether a master key is configured (secret entry is refused without one). */
  readonly configured: boolean
  /** Seals `plain` for `context` (where it is stored, e.g. `mcrd_x:secret`) under a fresh data key. */
  readonly seal: (plain: string, context: string) => Effect.Effect<Sealed, EncryptionNotConfigured>
  /** The plain text; null when the row has no key id or no ciphertext (spec 2.9). */
  readonly open: (
    ciphertext: string | null,
    keyId: string | null,
    context: string
  ) => Effect.Effect<string | null, EncryptionNotConfigured | EnvelopeUnreadable>
}

export class Envelope extends Context.Tag("svc/Envelope")<Envelope, EnvelopeService>() {}

export const makeEnvelope = (kms: KeyManagementService, configured: boolean): EnvelopeService => ({
  configured,
  seal: (plain, context) =>
    Effect.gen(function* () {
      if (!configured) return yield* new EncryptionNotConfigured()
      const dataKey = randomBytes(32)
      // the adapter's wrapped key is opaque text: encoded, it is one `.`-separated part of the envelope
      const wrapped = b64(Buffer.from(yield* kms.wrap(dataKey, kms.currentKeyId), "utf8"))
      const ciphertext = [VERSION, wrapped, encrypt(dataKey, Buffer.from(plain, "utf8"), context)].join(".")
      dataKey.fill(0)
      return { ciphertext, keyId: kms.currentKeyId }
    }),
  open: (ciphertext, keyId, context) =>
    Effect.gen(function* () {
      if (keyId === null || ciphertext === null) return null
      const [version, wrapped, ...parts] = ciphertext.split(".")
      if (version !== VERSION || wrapped === undefined) return yield* new EnvelopeUnreadable({ keyId })
      const dataKey = yield* kms.unwrap(Buffer.from(wrapped, "base64url").toString("utf8"), keyId)
      const plain = decrypt(dataKey, parts, context)
      dataKey.fill(0)
      if (plain === undefined) return yield* new EnvelopeUnreadable({ keyId })
      return plain.toString("utf8")
    })
})

/** The envelope over the local adapter with `AUTH_TOKEN_ENCRYPTION_KEY`; none configured: nothing is sealed. */
export const layer = (masterKey: Buffer | undefined) => {
  const kms = masterKey === undefined ? noKeyManagement : localKeyManagement(masterKey)
  return Layer.merge(Layer.succeed(KeyManagement, kms), Layer.succeed(Envelope, makeEnvelope(kms, masterKey !== undefined)))
}
