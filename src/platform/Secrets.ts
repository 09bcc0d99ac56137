/**
 * Secrets the platform must be able to read back (TOTP secrets, SSO client secrets, pending SSO
 * logins) are sealed with AES-256-GCM under one platform key; passwords are hashed with scrypt.
 * Neither a raw secret nor a password is ever stored or logged.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes, scrypt, timingSafeEqual } from "node:crypto"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import * as path from "node:path"
import { promisify } from "node:util"
import { Context, Effect, Layer } from "effect"

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number, options: object) => Promise<Buffer>

/** The platform key: 32 bytes. */
export interface SecretBox {
  readonly seal: (plain: string) => string
  /** The plain text, or undefined when the value was not sealed under this key or was altered. */
  readonly open: (sealed: string) => string | undefined
  /** A secret of its own for each purpose, the same on every node (HMAC-SHA256 of the purpose). */
  readonly derive: (purpose: string) => Buffer
}

const VERSION = "v1"

export const secretBox = (key: Buffer): SecretBox => {
  if (key.length !== 32) throw new Error("the platform secret key must be 32 bytes")
  return {
    derive: (purpose) => createHmac("sha256", key).update(purpose).digest(),
    seal: (plain) => {
      const iv = randomBytes(12)
      const cipher = createCipheriv("aes-256-gcm", key, iv)
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
      return [VERSION, iv.toString("base64url"), body.toString("base64url"), cipher.getAuthTag().toString("base64url")].join(".")
    },
    open: (sealed) => {
      const [version, iv, body, tag] = sealed.split(".")
      if (version !== VERSION || iv === undefined || body === undefined || tag === undefined) return undefined
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"))
        decipher.setAuthTag(Buffer.from(tag, "base64url"))
        return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8")
      } catch {
        return undefined
      }
    }
  }
}

// scrypt N=2^15, r=8, p=1 (OWASP's minimum is 2^17 with r=8 at p=1 for new systems; 2^15 keeps a
// sign-in near 50 ms on this machine's class of CPU; the parameters travel with each hash, so they
// can be raised without a migration).
const N = 1 << 15
const R = 8
const P = 1
const KEY_LENGTH = 32

export const hashPassword = async (password: string): Promise<string> => {
  const salt = randomBytes(16)
  const hash = await scryptAsync(password, salt, KEY_LENGTH, { N, r: R, p: P, maxmem: 64 * 1024 * 1024 })
  return `scrypt$${N}$${R}$${P}$${salt.toString("base64url")}$${hash.toString("base64url")}`
}

export const verifyPassword = async (password: string, stored: string): Promise<boolean> => {
  const [scheme, n, r, p, salt, hash] = stored.split("$")
  if (scheme !== "scrypt" || hash === undefined) return false
  const expected = Buffer.from(hash, "base64url")
  const actual = await scryptAsync(password, Buffer.from(salt, "base64url"), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 64 * 1024 * 1024
  })
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}

/** A hash to compare against when the account does not exist, so that a missing account costs
 * the same time as a wrong password. */
export const decoyPasswordHash = hashPassword("decoy password that matches nothing")

/** The platform's secret box, as a service. */
export class PlatformSecrets extends Context.Tag("svc/PlatformSecrets")<PlatformSecrets, SecretBox>() {}

/**
 * The key comes from `SECRET_KEY` (base64 or base64url of 32 bytes; every node of a cluster needs
 * the same one) or, when unset, from `<data dir>/secret.key`, created on first start.
 */
export const secretsLayer = (secretKey: string | undefined, dataDir: string) =>
  Layer.effect(
    PlatformSecrets,
    Effect.tryPromise(async () => {
      if (secretKey !== undefined) return secretBox(Buffer.from(secretKey, "base64"))
      const file = path.join(dataDir, "secret.key")
      const existing = await readFile(file, "utf8").catch(() => undefined)
      if (existing !== undefined) return secretBox(Buffer.from(existing.trim(), "base64"))
      await mkdir(dataDir, { recursive: true })
      const key = randomBytes(32)
      // wx: two nodes sharing a data directory keep whichever key was written first
      await writeFile(file, `${key.toString("base64")}\n`, { mode: 0o600, flag: "wx" }).catch(() => undefined)
      return secretBox(Buffer.from((await readFile(file, "utf8")).trim(), "base64"))
    }).pipe(Effect.orDie)
  )
