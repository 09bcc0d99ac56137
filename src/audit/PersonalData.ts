/**
 * Erasure by crypto-shredding (docs/audit.md): a person's words are sealed under a data key of
 * their own before they reach the log (the places are declared in actors/personal.ts). The data
 * key is wrapped by the master key through the key-management port and kept in `person_keys`,
 * never in an event; erasing the person deletes it, after which their sealed values open to
 * nothing while the log, its chain and its replays stay as they were.
 *
 * A sealed value is `pd1.<key ref>.<iv>.<ciphertext>.<tag>` (AES-256-GCM, the key ref as additional
 * data). Without a master key nothing is sealed: values go to the log in clear, as before this
 * change, and erasure is refused.
 */
import { randomBytes } from "node:crypto"
import { Effect } from "effect"
import type { Json } from "../../actors/kernel.ts"
import { deletePersonKeys, keepPersonKey, personKeyOf, personKeysByRef } from "./Queries.ts"
import { decrypt, Envelope, encrypt, EncryptionNotConfigured, type EnvelopeUnreadable, KeyManagement } from "../marketplace/Envelope.ts"

/** Why sealed values could not be opened: no master key, or not the one that wrapped their key. */
export type PersonalDataError = EncryptionNotConfigured | EnvelopeUnreadable

const SEALED_FORM = String.raw`pd1\.(pk_[0-9a-f]{32})\.([A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+)`
const SEALED = new RegExp(`^${SEALED_FORM}$`)
/** Sealed values inside a longer text (a notice that quotes one), each a whole word. */
const SEALED_WITHIN = new RegExp(`(?<![A-Za-z0-9_.-])${SEALED_FORM}(?![A-Za-z0-9_.-])`, "g")

/** The sealed values a text holds among its words, for `personalOpener` to fetch their keys. */
export const sealedWithin = (text: string): ReadonlyArray<string> => text.match(SEALED_WITHIN) ?? []

/** The key ref a sealed value names; undefined for a value in clear. */
export const sealedKeyRef = (value: unknown): string | undefined =>
  typeof value === "string" ? SEALED.exec(value)?.[1] : undefined

/** Seals a person's values with their data key, synchronously, once the key is at hand. */
export interface PersonSealer {
  readonly seal: (plain: string) => string
  /** JSON sealed as its text; in clear, the value itself. */
  readonly sealJson: (value: Json) => Json
}

const inClear: PersonSealer = { seal: (plain) => plain, sealJson: (value) => value }

const newKeyRef = () => `pk_${randomBytes(16).toString("hex")}`

/** The person's data key (made on first use, under the current master key), as a sealer. */
export const personSealer = (userId: string) =>
  Effect.gen(function* () {
    if (!(yield* Envelope).configured) return inClear
    const kms = yield* KeyManagement
    let stored = yield* personKeyOf(userId)
    if (stored === undefined) {
      const fresh = randomBytes(32)
      const wrappedKey = yield* kms.wrap(fresh, kms.currentKeyId)
      fresh.fill(0)
      // two nodes may make one at once: the first stays, both use it
      yield* keepPersonKey(userId, { keyRef: newKeyRef(), kmsKeyId: kms.currentKeyId, wrappedKey })
      stored = (yield* personKeyOf(userId))!
    }
    return sealerFor(stored.keyRef, yield* kms.unwrap(stored.wrappedKey, stored.kmsKeyId))
  })

/** An approver's note as its decision records it: sealed under the approver's key (docs/decisions.md); none, null. */
export const sealedNote = (approverId: string, note: string | undefined) =>
  note === undefined ? Effect.succeed(null) : Effect.map(personSealer(approverId), (sealer) => sealer.seal(note))

/** Seals under the data key `keyRef` names. */
export const sealerFor = (keyRef: string, dataKey: Buffer): PersonSealer => {
  const seal = (plain: string) => `pd1.${keyRef}.${encrypt(dataKey, Buffer.from(plain, "utf8"), keyRef)}`
  return { seal, sealJson: (value) => seal(JSON.stringify(value)) }
}

/** Opens values read from the log or the read models; `null` stands for an erased value. */
export interface PersonalOpener {
  /** A value in clear comes back as it is. */
  readonly text: (value: string) => string | null
  /** A sealed JSON value (see `sealJson`), opened and parsed; a value in clear comes back as it is. */
  readonly json: (value: unknown) => unknown
  /** A text with each sealed value among its words (`sealedWithin`) opened, an erased one left out. */
  readonly within: (text: string) => string
}

/**
 * An opener for `values`: the keys their sealed members name, fetched and unwrapped at once. A key
 * that is gone was erased: its values open to null. A key that is there but does not unwrap (another
 * master key, none configured) fails, rather than passing the values off as erased.
 */
export const personalOpener = (values: ReadonlyArray<unknown>) =>
  Effect.gen(function* () {
    const refs = [...new Set(values.map(sealedKeyRef).filter((ref): ref is string => ref !== undefined))]
    const keys = new Map<string, Buffer>()
    if (refs.length > 0) {
      const kms = yield* KeyManagement
      for (const stored of yield* personKeysByRef(refs)) keys.set(stored.keyRef, yield* kms.unwrap(stored.wrappedKey, stored.kmsKeyId))
    }
    return openerFor(keys)
  })

/** Opens with the data keys at hand, by key ref; a value naming another key opens to null (erased). */
export const openerFor = (keys: ReadonlyMap<string, Buffer>): PersonalOpener => {
  const text = (value: string): string | null => {
    const match = SEALED.exec(value)
    if (match === null) return value
    const key = keys.get(match[1])
    const plain = key === undefined ? undefined : decrypt(key, match[2].split("."), match[1])
    return plain === undefined ? null : plain.toString("utf8")
  }
  const json = (value: unknown): unknown => {
    if (typeof value !== "string" || sealedKeyRef(value) === undefined) return value
    const plain = text(value)
    return plain === null ? null : JSON.parse(plain)
  }
  const within = (value: string) => {
    let erased = false
    const opened = value.replace(SEALED_WITHIN, (sealed) => text(sealed) ?? ((erased = true), ""))
    // the space that set off an erased value goes with it
    return erased ? opened.trim() : opened
  }
  return { text, json, within }
}

/** Destroys the person's data keys; how many there were. Without a master key nothing was sealed, so nothing can be erased. */
export const destroyPersonKeys = (userId: string) =>
  Effect.gen(function* () {
    if (!(yield* Envelope).configured) return yield* new EncryptionNotConfigured()
    return yield* deletePersonKeys(userId)
  })
