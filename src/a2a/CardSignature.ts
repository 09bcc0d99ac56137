/**
 * The A2A 1.0 Agent Card's signatures (spec §8.4): a JWS in flattened JSON serialization over the
 * card's canonical form, ES256 under the node's card key, whose public half is served as a JWK Set
 * at `/.well-known/jwks.json` (named by `jku` in each signature's protected header).
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from "node:crypto"
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises"
import * as path from "node:path"
import { Context, Effect, Layer } from "effect"
import { canonicalJson } from "../../streams/Chain.ts"

export const JWKS_PATH = "/.well-known/jwks.json"

/** One entry of a card's `signatures`: the JWS without its payload, which is the card itself. */
export interface CardSignature {
  readonly protected: string
  readonly signature: string
}

/**
 * What a verifier leaves out when it rebuilds the canonical form (the 1.0 reference client: the card
 * read into the 1.0 schema and back, then emptied of "" and null and of lists and objects left
 * empty). The schema step also drops a non-optional field at its proto3 default (`required: false`
 * of an extension): the cards of src/a2a/Card.ts carry no such field, so this step is all it takes.
 */
const prune = (value: unknown): unknown => {
  if (value === "" || value === null || value === undefined) return undefined
  if (Array.isArray(value)) {
    const items = value.map(prune).filter((item) => item !== undefined)
    return items.length === 0 ? undefined : items
  }
  if (typeof value === "object") {
    const entries = Object.entries(value).flatMap(([key, v]) => {
      const kept = prune(v)
      return kept === undefined ? [] : [[key, kept] as const]
    })
    return entries.length === 0 ? undefined : Object.fromEntries(entries)
  }
  return value
}

/** What a signature covers: the card without its `signatures`, pruned, in JCS (RFC 8785: the log's canonical JSON). */
export const canonicalCard = (card: object): string => {
  const { signatures: _signatures, ...unsigned } = card as { signatures?: unknown }
  return canonicalJson(prune(unsigned) ?? {})
}

export interface CardSignerService {
  /** The card with one signature more, whose `jku` is the JWK Set's URL under `baseUrl`. */
  readonly sign: <C extends object>(card: C, baseUrl: string) => C & { readonly signatures: ReadonlyArray<CardSignature> }
  /** The JWK Set served at JWKS_PATH: the public key each signature's `kid` names. */
  readonly jwks: { readonly keys: ReadonlyArray<Record<string, string>> }
}

export class CardSigner extends Context.Tag("svc/a2a/CardSigner")<CardSigner, CardSignerService>() {}

/** Cards whose signature is kept: the public card and each extended card a caller reads, per base URL. */
const SIGNATURES_KEPT = 256

export const makeCardSigner = (privateKey: KeyObject): CardSignerService => {
  const { kty, crv, x, y } = createPublicKey(privateKey).export({ format: "jwk" }) as Record<string, string>
  // RFC 7638: the key's thumbprint names it, so a rotated key is a new kid
  const kid = createHash("sha256").update(JSON.stringify({ crv, kty, x, y })).digest("base64url")
  const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64url")
  // A card changes with its agents and settings, not per request; ECDSA costs far more than the
  // canonical form, and one card answers with one signature until it changes.
  const signatures = new Map<string, string>()
  const signatureOf = (signingInput: string) => {
    const known = signatures.get(signingInput)
    if (known !== undefined) return known
    if (signatures.size >= SIGNATURES_KEPT) signatures.clear()
    const signature = sign("sha256", Buffer.from(signingInput), { key: privateKey, dsaEncoding: "ieee-p1363" }).toString("base64url")
    signatures.set(signingInput, signature)
    return signature
  }
  return {
    jwks: { keys: [{ kty: kty!, crv: crv!, x: x!, y: y!, kid, use: "sig", alg: "ES256" }] },
    sign: (card, baseUrl) => {
      const header = b64(JSON.stringify({ alg: "ES256", typ: "JOSE", kid, jku: `${baseUrl.replace(/\/+$/, "")}${JWKS_PATH}` }))
      const signature = signatureOf(`${header}.${b64(canonicalCard(card))}`)
      const earlier = (card as { signatures?: ReadonlyArray<CardSignature> }).signatures ?? []
      return { ...card, signatures: [...earlier, { protected: header, signature }] }
    }
  }
}

/** A P-256 private key from PKCS#8 PEM or a JWK (JSON); anything else is refused at start. */
const privateKeyOf = (text: string): KeyObject => {
  const trimmed = text.trim()
  const key = trimmed.startsWith("{") ? createPrivateKey({ key: JSON.parse(trimmed), format: "jwk" }) : createPrivateKey(trimmed)
  if (key.asymmetricKeyType !== "ec" || key.asymmetricKeyDetails?.namedCurve !== "prime256v1") {
    throw new Error("A2A_CARD_SIGNING_KEY must be an EC P-256 private key (PKCS#8 PEM or JWK) for ES256")
  }
  return key
}

/**
 * The card key: `A2A_CARD_SIGNING_KEY` when set (every node of a cluster needs the same one), else
 * `<data dir>/a2a-card-signing.pem`, created on first start (as the audit key is).
 */
export const loadCardSigningKey = async (configured: string | undefined, dataDir: string): Promise<KeyObject> => {
  if (configured !== undefined) return privateKeyOf(configured)
  const file = path.join(dataDir, "a2a-card-signing.pem")
  const stored = await readFile(file, "utf8").catch(() => undefined)
  if (stored !== undefined) return privateKeyOf(stored)
  await mkdir(dataDir, { recursive: true })
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" })
  // wx: two nodes starting on one data directory keep the first one's key
  await writeFile(file, privateKey.export({ format: "pem", type: "pkcs8" }), { mode: 0o600, flag: "wx" }).catch(() => undefined)
  await chmod(file, 0o600).catch(() => undefined)
  return privateKeyOf(await readFile(file, "utf8"))
}

export const cardSignerLayer = (configured: string | undefined, dataDir: string) =>
  Layer.effect(CardSigner, Effect.map(Effect.promise(() => loadCardSigningKey(configured, dataDir)), makeCardSigner))
