/**
 * A workspace's certificate authority for its enrolled machines: an Ed25519 key derived from the
 * platform key for the workspace (the same on every node, never stored, never on the log) and a
 * self-signed CA certificate over it, both rebuilt on demand (Ed25519 signs deterministically, and
 * the CA's validity is fixed, so every node serves the same certificate). It signs two things:
 * - short-lived X.509 client certificates (`host.certificate.renew`), with `clientAuth` usage;
 * - short-lived Git credentials (`host.git_credential.get`): an EdDSA JWT naming one repository,
 *   which a Git server or proxy that trusts the CA's certificate checks.
 * Node's crypto verifies and parses certificates but does not write them, so the few DER shapes an
 * X.509 v3 certificate needs (RFC 5280) are written here.
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject, sign } from "node:crypto"
import type { SecretBox } from "../platform/Secrets.ts"

// DER (X.690): tag, length, content

const der = (tag: number, content: Buffer): Buffer => {
  const n = content.length
  const length = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff])
  return Buffer.concat([Buffer.from([tag]), length, content])
}
const sequence = (...parts: ReadonlyArray<Buffer>) => der(0x30, Buffer.concat(parts))
const set = (...parts: ReadonlyArray<Buffer>) => der(0x31, Buffer.concat(parts))
const explicit = (n: number, inner: Buffer) => der(0xa0 + n, inner)
const bitString = (bytes: Buffer, unusedBits = 0) => der(0x03, Buffer.concat([Buffer.from([unusedBits]), bytes]))
const octetString = (bytes: Buffer) => der(0x04, bytes)
const utf8 = (text: string) => der(0x0c, Buffer.from(text, "utf8"))
const TRUE = der(0x01, Buffer.from([0xff]))
/** A non-negative INTEGER from big-endian bytes. */
const integer = (bytes: Buffer) => der(0x02, bytes[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes)
const oid = (dotted: string) => {
  const [a, b, ...rest] = dotted.split(".").map(Number)
  const base128 = (n: number): Array<number> => {
    const out = [n & 0x7f]
    for (let v = Math.floor(n / 128); v > 0; v = Math.floor(v / 128)) out.unshift((v & 0x7f) | 0x80)
    return out
  }
  return der(0x06, Buffer.from([a! * 40 + b!, ...rest.flatMap(base128)]))
}
/** UTCTime until 2049, GeneralizedTime from 2050 (RFC 5280 4.1.2.5), to the second. */
const time = (at: Date) => {
  const digits = at.toISOString().replace(/[-:T]/g, "").slice(0, 14)
  return at.getUTCFullYear() < 2050 ? der(0x17, Buffer.from(`${digits.slice(2)}Z`)) : der(0x18, Buffer.from(`${digits}Z`))
}

const ED25519 = sequence(oid("1.3.101.112"))
const name = (commonName: string, organization: string) =>
  sequence(set(sequence(oid("2.5.4.10"), utf8(organization))), set(sequence(oid("2.5.4.3"), utf8(commonName))))
const extension = (id: string, critical: boolean, value: Buffer) => sequence(oid(id), ...(critical ? [TRUE] : []), octetString(value))
const spkiOf = (key: KeyObject) => key.export({ type: "spki", format: "der" })
const keyId = (spki: Buffer) => createHash("sha1").update(spki).digest()

interface Certified {
  readonly serial: Buffer
  readonly subject: Buffer
  readonly publicKey: KeyObject
  readonly notBefore: Date
  readonly notAfter: Date
  readonly extensions: ReadonlyArray<Buffer>
}

const certificate = (issuer: Buffer, issuerKey: KeyObject, c: Certified): string => {
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))),
    integer(c.serial),
    ED25519,
    issuer,
    sequence(time(c.notBefore), time(c.notAfter)),
    c.subject,
    spkiOf(c.publicKey),
    explicit(3, sequence(...c.extensions))
  )
  const body = sequence(tbs, ED25519, bitString(sign(null, tbs, issuerKey))).toString("base64")
  return `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)!.join("\n")}\n-----END CERTIFICATE-----\n`
}

/** How long an issued client certificate is valid: a day, renewed by the machine before it ends. */
export const CLIENT_CERTIFICATE_HOURS = 24
/** How long a Git credential is valid. */
export const GIT_CREDENTIAL_MINUTES = 60

const CA_NOT_BEFORE = new Date("2025-01-01T00:00:00Z")
const CA_NOT_AFTER = new Date("2050-12-31T23:59:59Z")
// PKCS#8 of an Ed25519 key, up to its 32-byte seed (RFC 8410)
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex")

export interface IssuedCertificate {
  readonly certificate: string
  readonly serialNumber: string
  readonly notBefore: string
  readonly notAfter: string
}

export interface WorkspaceCa {
  /** The CA certificate (PEM) a relying party trusts for the workspace's machines. */
  readonly certificate: string
  /** A client certificate for `publicKey`, naming the machine (CN) and the workspace (O). */
  readonly issue: (machineId: string, publicKey: KeyObject, serialNumber: string, notBefore: Date) => IssuedCertificate
  /** A compact EdDSA JWT under the CA key. */
  readonly signJwt: (claims: Record<string, unknown>) => string
}

export const workspaceCa = (secrets: SecretBox, workspaceId: string): WorkspaceCa => {
  const seed = secrets.derive(`workspace-ca:${workspaceId}`)
  const caKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" })
  const caPublic = createPublicKey(caKey)
  const caName = name(`Machine CA for ${workspaceId}`, workspaceId)
  const caKeyId = keyId(spkiOf(caPublic))
  const caCertificate = certificate(caName, caKey, {
    serial: createHash("sha256").update(`ca:${workspaceId}`).digest().subarray(0, 16),
    subject: caName,
    publicKey: caPublic,
    notBefore: CA_NOT_BEFORE,
    notAfter: CA_NOT_AFTER,
    extensions: [
      extension("2.5.29.19", true, sequence(TRUE)), // basicConstraints: cA
      extension("2.5.29.15", true, bitString(Buffer.from([0x06]), 1)), // keyUsage: keyCertSign, cRLSign
      extension("2.5.29.14", false, octetString(caKeyId)) // subjectKeyIdentifier
    ]
  })
  return {
    certificate: caCertificate,
    issue: (machineId, publicKey, serialNumber, notBefore) => {
      const notAfter = new Date(notBefore.getTime() + CLIENT_CERTIFICATE_HOURS * 3_600_000)
      const pem = certificate(caName, caKey, {
        serial: Buffer.from(serialNumber, "hex"),
        subject: name(machineId, workspaceId),
        publicKey,
        notBefore,
        notAfter,
        extensions: [
          extension("2.5.29.19", true, sequence()), // basicConstraints: not a CA
          extension("2.5.29.15", true, bitString(Buffer.from([0x80]), 7)), // keyUsage: digitalSignature
          extension("2.5.29.37", false, sequence(oid("1.3.6.1.5.5.7.3.2"))), // extKeyUsage: clientAuth
          extension("2.5.29.35", false, sequence(der(0x80, caKeyId))) // authorityKeyIdentifier
        ]
      })
      return { certificate: pem, serialNumber, notBefore: notBefore.toISOString(), notAfter: notAfter.toISOString() }
    },
    signJwt: (claims) => {
      const b64 = (value: unknown) => Buffer.from(JSON.stringify(value), "utf8").toString("base64url")
      const signingInput = `${b64({ alg: "EdDSA", typ: "JWT", kid: caKeyId.toString("hex") })}.${b64(claims)}`
      return `${signingInput}.${sign(null, Buffer.from(signingInput), caKey).toString("base64url")}`
    }
  }
}

/** SHA-256 of a public key's DER SubjectPublicKeyInfo, hex: what names the certified key. */
export const publicKeySha256 = (publicKey: KeyObject) => createHash("sha256").update(spkiOf(publicKey)).digest("hex")
