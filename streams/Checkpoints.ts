/**
 * Signed checkpoints of the log (docs/audit.md): every N events or T seconds, a partition's writer
 * appends a record naming an offset of the partition and the chain's hash there, signed with the
 * operator's Ed25519 key. The chain shows the log was not altered after a point; a checkpoint,
 * verified with the public key alone, shows what the log held at that point, so a log rewritten
 * whole (every hash recomputed) or cut short after a checkpoint no longer agrees with it.
 */
import { Context, Effect, Layer } from "effect"
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign, verify } from "node:crypto"
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises"
import * as path from "node:path"
import { canonicalJson } from "./Chain.ts"
import type { EventRecord, LoggedEvent } from "./EventLog.ts"

/** The type of a checkpoint record; its key is `log-checkpoint:<partition>:<offset>`, seq 1 (no actor kind has it: nothing projects it). */
export const CHECKPOINT_TYPE = "log.checkpoint"
const KEY_PREFIX = "log-checkpoint:"

export interface CheckpointClaim {
  readonly partition: number
  /** The offset of the event whose hash `head` is. */
  readonly offset: number
  readonly head: string
  /** When it was signed (ISO 8601). */
  readonly at: string
}

export interface CheckpointPayload extends CheckpointClaim {
  /** The signing key's id: the first 16 hex digits of SHA-256 of its raw 32-byte public key. */
  readonly keyId: string
  /** Ed25519 signature of the claim's encoding, base64url. */
  readonly signature: string
}

/** The signed bytes: `["svc-log-checkpoint-v1", partition, offset, head, at]` as canonical JSON, UTF-8. */
export const claimBytes = (claim: CheckpointClaim): Buffer =>
  Buffer.from(canonicalJson(["svc-log-checkpoint-v1", claim.partition, claim.offset, claim.head, claim.at]), "utf8")

export const isCheckpoint = (event: LoggedEvent | EventRecord): boolean => event.type === CHECKPOINT_TYPE && event.key.startsWith(KEY_PREFIX)

/** What a checkpoint's payload claims, if it is well formed. */
export const checkpointPayload = (payload: unknown): CheckpointPayload | undefined => {
  const p = payload as Partial<CheckpointPayload> | null
  return p !== null && typeof p === "object" && typeof p.partition === "number" && typeof p.offset === "number" && typeof p.head === "string" &&
      typeof p.at === "string" && typeof p.keyId === "string" && typeof p.signature === "string"
    ? (p as CheckpointPayload)
    : undefined
}

export const verifyClaim = (publicKey: KeyObject, payload: CheckpointPayload): boolean => {
  try {
    return verify(null, claimBytes(payload), publicKey, Buffer.from(payload.signature, "base64url"))
  } catch {
    return false
  }
}

/**
 * The genesis record (docs/audit.md): the first record of every partition of a repartitioned log
 * (`svc log repartition`). Its chain starts from GENESIS like any partition's; it names, signed,
 * the final head of every partition of the log it was rewritten from, so that a verification
 * goes from the old log's chains to the new one's. Key `log-genesis:<generation>:<partition>`,
 * seq 1 (no actor kind has it: nothing projects it).
 */
export const GENESIS_TYPE = "log.genesis"
const GENESIS_KEY_PREFIX = "log-genesis:"

/** An old partition's final head: the offset and hash of its last chained event (offset -1 and GENESIS: none). */
export interface ChainHead {
  readonly partition: number
  readonly offset: number
  readonly hash: string
}

export interface GenesisClaim {
  /** The new log's partition this record starts. */
  readonly partition: number
  /** The new log's partition count and generation. */
  readonly partitions: number
  readonly generation: number
  /** The generation it was rewritten from, and the final head of each of its partitions, in partition order. */
  readonly previousGeneration: number
  readonly heads: ReadonlyArray<ChainHead>
  /** When it was signed (ISO 8601). */
  readonly at: string
}

export interface GenesisPayload extends GenesisClaim {
  readonly keyId: string
  readonly signature: string
}

/** The signed bytes: `["svc-log-genesis-v1", partition, partitions, generation, previousGeneration, heads, at]` as canonical JSON, UTF-8. */
export const genesisBytes = (claim: GenesisClaim): Buffer =>
  Buffer.from(
    canonicalJson(["svc-log-genesis-v1", claim.partition, claim.partitions, claim.generation, claim.previousGeneration, claim.heads, claim.at]),
    "utf8"
  )

export const isGenesis = (event: LoggedEvent | EventRecord): boolean => event.type === GENESIS_TYPE && event.key.startsWith(GENESIS_KEY_PREFIX)

/** What a genesis record's payload claims, if it is well formed. */
export const genesisPayload = (payload: unknown): GenesisPayload | undefined => {
  const p = payload as Partial<GenesisPayload> | null
  const wellFormed = p !== null && typeof p === "object" && typeof p.partition === "number" && typeof p.partitions === "number" &&
    typeof p.generation === "number" && typeof p.previousGeneration === "number" && typeof p.at === "string" &&
    typeof p.keyId === "string" && typeof p.signature === "string" && Array.isArray(p.heads) &&
    p.heads.every((h) => typeof h?.partition === "number" && typeof h.offset === "number" && typeof h.hash === "string")
  return wellFormed ? (p as GenesisPayload) : undefined
}

export const verifyGenesis = (publicKey: KeyObject, payload: GenesisPayload): boolean => {
  try {
    return verify(null, genesisBytes(payload), publicKey, Buffer.from(payload.signature, "base64url"))
  } catch {
    return false
  }
}

const rawPublicKey = (publicKey: KeyObject): Buffer => Buffer.from(publicKey.export({ format: "jwk" }).x!, "base64url")

export const keyIdOf = (publicKey: KeyObject): string => createHash("sha256").update(rawPublicKey(publicKey)).digest("hex").slice(0, 16)

/** The operator's signing key, and how often the writers sign. */
export interface AuditSignerService {
  readonly keyId: string
  readonly publicKey: KeyObject
  /** A checkpoint once this many events were appended to a partition since its last one. */
  readonly everyEvents: number
  /** A checkpoint this often while a partition had events since its last one. */
  readonly everySeconds: number
  /** The checkpoint record of a claim, signed. */
  readonly record: (claim: CheckpointClaim) => EventRecord
  /** The genesis record of a repartitioned log's partition, signed. */
  readonly genesis: (claim: GenesisClaim) => EventRecord
  /** The Ed25519 signature of bytes, base64url: what else the node signs with its audit key (approval receipts). */
  readonly signature: (bytes: Uint8Array) => string
}

export class AuditSigner extends Context.Tag("svc/streams/AuditSigner")<AuditSigner, AuditSignerService>() {}

export const makeSigner = (privateKey: KeyObject, every: { readonly events: number; readonly seconds: number }): AuditSignerService => {
  const publicKey = createPublicKey(privateKey)
  const keyId = keyIdOf(publicKey)
  const signature = (bytes: Uint8Array) => sign(null, bytes, privateKey).toString("base64url")
  return {
    keyId,
    publicKey,
    everyEvents: every.events,
    everySeconds: every.seconds,
    signature,
    record: (claim) => {
      const payload: CheckpointPayload = { ...claim, keyId, signature: signature(claimBytes(claim)) }
      return {
        key: `${KEY_PREFIX}${claim.partition}:${claim.offset}`,
        seq: 1,
        firstSeq: 1,
        type: CHECKPOINT_TYPE,
        payload,
        at: claim.at,
        commandId: `checkpoint:${claim.partition}:${claim.offset}`,
        actor: "system"
      }
    },
    genesis: (claim) => {
      const payload: GenesisPayload = { ...claim, keyId, signature: signature(genesisBytes(claim)) }
      return {
        key: `${GENESIS_KEY_PREFIX}${claim.generation}:${claim.partition}`,
        seq: 1,
        firstSeq: 1,
        type: GENESIS_TYPE,
        payload,
        at: claim.at,
        commandId: `genesis:${claim.generation}:${claim.partition}`,
        actor: "system"
      }
    }
  }
}

/** PKCS #8 DER of an Ed25519 key: this prefix, then the 32-byte seed (RFC 8410). */
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex")

/** An Ed25519 private key from base64 (or base64url) of its 32-byte seed. */
export const privateKeyFromSeed = (seed: string): KeyObject => {
  const bytes = Buffer.from(seed, "base64")
  if (bytes.length !== 32) throw new Error("AUDIT_SIGNING_KEY must be base64 of a 32-byte Ed25519 seed")
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, bytes]), format: "der", type: "pkcs8" })
}

const seedOf = (privateKey: KeyObject): string => Buffer.from(privateKey.export({ format: "jwk" }).d!, "base64url").toString("base64")

/**
 * The operator's key: `AUDIT_SIGNING_KEY` when set (every node of a cluster needs the same one),
 * else `<data dir>/audit-signing.key`, created on first start (as `secret.key` is).
 */
export const loadSigningKey = (configured: string | undefined, dataDir: string): Promise<KeyObject> =>
  configured !== undefined
    ? Promise.resolve(privateKeyFromSeed(configured))
    : (async () => {
        const file = path.join(dataDir, "audit-signing.key")
        const stored = await readFile(file, "utf8").catch(() => undefined)
        if (stored !== undefined) return privateKeyFromSeed(stored.trim())
        await mkdir(dataDir, { recursive: true })
        const { privateKey } = generateKeyPairSync("ed25519")
        // wx: two nodes starting on one data directory keep the first one's key
        await writeFile(file, `${seedOf(privateKey)}\n`, { mode: 0o600, flag: "wx" }).catch(() => undefined)
        await chmod(file, 0o600).catch(() => undefined)
        return privateKeyFromSeed((await readFile(file, "utf8")).trim())
      })()

export interface AuditSettings {
  readonly signingKey: string | undefined
  readonly checkpointEvents: number
  readonly checkpointSeconds: number
}

export const signerLayer = (settings: AuditSettings, dataDir: string) =>
  Layer.effect(
    AuditSigner,
    Effect.map(Effect.promise(() => loadSigningKey(settings.signingKey, dataDir)), (key) =>
      makeSigner(key, { events: settings.checkpointEvents, seconds: settings.checkpointSeconds })
    )
  )

/** The public key as served at `GET /.well-known/svc-audit-key`. */
export const publicKeyDocument = (signer: Pick<AuditSignerService, "keyId" | "publicKey">) => ({
  algorithm: "Ed25519",
  keyId: signer.keyId,
  /** Raw 32-byte public key, base64url (RFC 8037's `x`). */
  publicKey: rawPublicKey(signer.publicKey).toString("base64url"),
  pem: signer.publicKey.export({ format: "pem", type: "spki" }).toString()
})
