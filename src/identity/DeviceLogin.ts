/**
 * The CLI login (`cli_session_v1`, spec 5 rule 8): an RFC 8628 device authorization grant.
 *
 * 1. The CLI asks for a code (`requestDeviceCode`): a `dvc_` device code, which it keeps and of
 *    which only the lookup id and hash are stored, and a short user code it shows its user.
 * 2. A person signed in in a browser enters the user code (the `auth.device.approve` capability,
 *    src/identity/Device.ts, through the one checkpoint) for a workspace or the organization.
 * 3. The CLI polls (`pollDeviceToken`). The first poll after approval issues a new `aky_` key with
 *    `scopes.purpose = cli_session_v1`, created by the approver, for the approved place, valid for
 *    30 days, and marks the device redeemed. The raw key is returned in that one reply and stored
 *    nowhere; every later poll gets `invalid_grant`.
 *
 * The token route answers with RFC 8628 section 3.5 bodies (`{ error: "authorization_pending" }`
 * and so on, status 400) rather than the platform's `{ error: { code, reason, message } }`:
 * device clients (OAuth libraries, `gh`-style CLIs) read exactly those. Everything else about the
 * flow (the code route's refusals, approval and denial) uses the platform's error table.
 *
 * `slow_down` needs the time of a device's previous poll. It is kept in memory, per node
 * (`PollTracker`): a client that alternates between nodes may poll up to once per interval per
 * node, which is acceptable for a rate hint; nothing is lost on restart but the hint.
 *
 * All times come from Effect's `Clock`, so tests can move time.
 */
import { Clock, Effect, Schema } from "effect"
import { randomInt, randomUUID } from "node:crypto"
import { ApiKeyActor } from "../../actors/apikey/actor.ts"
import { IssueCredential, RevokeApiKey } from "../../actors/apikey/protocol.ts"
import { DeviceActor } from "../../actors/device/actor.ts"
import { RedeemDevice, RequestDevice } from "../../actors/device/protocol.ts"
import type { CommandMeta } from "../../actors/kernel.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { mintApiKey, mintToken, newPublicId, parseToken, verifySecret } from "./ApiKeyToken.ts"
import { NotFound, Unavailable } from "../platform/Errors.ts"
import { isRetryable, orOwnerUnreachable } from "../platform/Failures.ts"
import { deviceByLookupId, devicesByUserCode, userCodeTaken } from "./Queries.ts"

/** A device code lives ten minutes (RFC 8628 `expires_in`). */
export const DEVICE_CODE_TTL_SECONDS = 600
/** The least time between two polls of one device (RFC 8628 `interval`). */
export const POLL_INTERVAL_SECONDS = 5
/** A CLI login key is valid for 30 days from its issue. */
export const CLI_LOGIN_TTL_MS = 30 * 24 * 60 * 60 * 1000
export const CLI_LOGIN_PURPOSE = "cli_session_v1"
/** RFC 8628 section 3.4: the only `grant_type` the token route accepts, when one is sent. */
export const DEVICE_GRANT_TYPE = "urn:ietf:params:oauth:grant-type:device_code"

/**
 * RFC 8628 section 6.1: twenty consonants, no vowels (no words), no digits (nothing to mistake
 * for O, I, S or B). Eight of them are 34.5 bits; guessing one means a signed-in member of the
 * organization approving a login they do not hold anyway.
 */
export const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ"
const USER_CODE_LENGTH = 8
const USER_CODE = new RegExp(`^[${USER_CODE_ALPHABET}]{${USER_CODE_LENGTH}}$`)

const display = (chars: string) => `${chars.slice(0, 4)}-${chars.slice(4)}`

/** A new user code, `XXXX-XXXX`. */
export const newUserCode = (): string => {
  let chars = ""
  for (let i = 0; i < USER_CODE_LENGTH; i++) chars += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)]
  return display(chars)
}

/** A typed user code in its stored form (`XXXX-XXXX`): case, spaces and dashes do not matter. */
export const normalizeUserCode = (typed: string): string | undefined => {
  const chars = typed.toUpperCase().replace(/[\s-]/g, "")
  return USER_CODE.test(chars) ? display(chars) : undefined
}

/** The token route's answers other than a token (RFC 8628 section 3.5, RFC 6749 section 5.2). */
export class DeviceTokenError extends Schema.TaggedError<DeviceTokenError>()("DeviceTokenError", {
  error: Schema.Literal(
    "invalid_request",
    "unsupported_grant_type",
    "authorization_pending",
    "slow_down",
    "access_denied",
    "expired_token",
    "invalid_grant"
  ),
  error_description: Schema.String
}) {}

const tokenError = (error: DeviceTokenError["error"], description: string) => new DeviceTokenError({ error, error_description: description })

const iso = (millis: number) => new Date(millis).toISOString()

const millisOf = (value: Date | string) => (value instanceof Date ? value.getTime() : Date.parse(value))

/** What the code route returns (RFC 8628 section 3.2). */
export interface DeviceCodeResponse {
  readonly device_code: string
  readonly user_code: string
  readonly verification_uri: string
  readonly verification_uri_complete: string
  readonly expires_in: number
  readonly interval: number
}

/** A user code no live device login shows; a rare clash draws again. */
const freeUserCode = (now: number) =>
  Effect.gen(function* () {
    for (let attempt = 0; attempt < 8; attempt++) {
      const candidate = newUserCode()
      if (!(yield* userCodeTaken(candidate, iso(now)))) return candidate
    }
    return yield* new Unavailable({ message: "no free user code was found; retry" })
  })

/** Step 1: a new device login, pending for ten minutes. */
export const requestDeviceCode = (input: { readonly clientName: string; readonly baseUrl: string }) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const now = yield* Clock.currentTimeMillis
    const userCode = yield* freeUserCode(now)
    const deviceId = newPublicId("dev")
    const code = mintToken("dvc_")
    const meta: CommandMeta = { commandId: randomUUID(), at: iso(now), actor: "anonymous" }
    yield* orOwnerUnreachable(host.send(DeviceActor, deviceId, new RequestDevice({
      deviceId,
      userCode,
      deviceLookup: code.lookupId,
      deviceSecretHash: code.secretHash,
      clientName: input.clientName,
      expiresAt: iso(now + DEVICE_CODE_TTL_SECONDS * 1000)
    }), meta))
    const verificationUri = `${input.baseUrl.replace(/\/+$/, "")}/device`
    return {
      device_code: code.raw,
      user_code: userCode,
      verification_uri: verificationUri,
      verification_uri_complete: `${verificationUri}?user_code=${encodeURIComponent(userCode)}`,
      expires_in: DEVICE_CODE_TTL_SECONDS,
      interval: POLL_INTERVAL_SECONDS
    } satisfies DeviceCodeResponse
  })

/**
 * When each device last polled this node, for `slow_down`. Entries go once their device code has
 * expired (swept now and then), so the map holds at most the live devices that polled here.
 */
export class PollTracker {
  readonly #polls = new Map<string, { readonly at: number; readonly expiresAt: number }>()
  #sinceSweep = 0

  /** Records a poll of a pending device and says whether it came sooner than the interval allows. */
  tooSoon(deviceId: string, now: number, expiresAt: number): boolean {
    if (++this.#sinceSweep >= 1024) this.sweep(now)
    const previous = this.#polls.get(deviceId)
    this.#polls.set(deviceId, { at: now, expiresAt })
    return previous !== undefined && now - previous.at < POLL_INTERVAL_SECONDS * 1000
  }

  /** Forgets a device that will not be pending again. */
  forget(deviceId: string): void {
    this.#polls.delete(deviceId)
  }

  sweep(now: number): void {
    this.#sinceSweep = 0
    for (const [deviceId, poll] of this.#polls) if (poll.expiresAt <= now) this.#polls.delete(deviceId)
  }

  get size(): number {
    return this.#polls.size
  }
}

/** What the token route returns once approved (RFC 8628 section 3.5, RFC 6749 section 5.1). */
export interface DeviceTokenResponse {
  readonly access_token: string
  readonly token_type: "Bearer"
  readonly key_id: string
  readonly expires_in: number
}

/** Step 3: one poll of the CLI. Fails with `DeviceTokenError` for every RFC 8628 answer. */
export const pollDeviceToken = (input: { readonly deviceCode: string; readonly grantType?: string | undefined }, tracker: PollTracker) =>
  Effect.gen(function* () {
    if (input.grantType !== undefined && input.grantType !== DEVICE_GRANT_TYPE) {
      return yield* tokenError("unsupported_grant_type", `grant_type must be ${DEVICE_GRANT_TYPE}`)
    }
    const code = parseToken("dvc_", input.deviceCode)
    if (code === undefined) return yield* tokenError("invalid_grant", "the device code is not valid")
    const device = yield* deviceByLookupId(code.lookupId)
    // the same answer for an unknown and a wrong code: nothing to learn by probing
    if (device === undefined || !verifySecret(code.raw, device.device_secret_hash)) {
      return yield* tokenError("invalid_grant", "the device code is not valid")
    }
    const deviceId: string = device.device_id
    if (device.status === "redeemed") {
      tracker.forget(deviceId)
      return yield* tokenError("invalid_grant", "the device code has already been used; start the CLI login again")
    }
    if (device.status === "denied") {
      tracker.forget(deviceId)
      return yield* tokenError("access_denied", "the CLI login was denied")
    }
    const now = yield* Clock.currentTimeMillis
    const expiresAt = millisOf(device.expires_at)
    if (expiresAt <= now) {
      tracker.forget(deviceId)
      return yield* tokenError("expired_token", "the device code has expired; start the CLI login again")
    }
    if (device.status !== "approved") {
      // slow_down is authorization_pending with a warning: only a pending device is told to wait
      if (tracker.tooSoon(deviceId, now, expiresAt)) {
        return yield* tokenError("slow_down", `poll at most every ${POLL_INTERVAL_SECONDS} seconds, and add 5 seconds from now on`)
      }
      return yield* tokenError("authorization_pending", "the CLI login has not been approved yet")
    }
    tracker.forget(deviceId)
    return yield* redeem(deviceId, { userId: device.user_id, orgId: device.org_id, workspaceId: device.workspace_id, clientName: device.client_name }, now)
  })

/** Issues the CLI login key for an approved device, then marks the device redeemed. */
const redeem = (
  deviceId: string,
  approval: { readonly userId: string; readonly orgId: string; readonly workspaceId: string | null; readonly clientName: string },
  now: number
) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const keyId = newPublicId("aky")
    const key = mintApiKey()
    // the key is the approver's: its creation is recorded as theirs in the organization's audit log
    const meta = (): CommandMeta => ({ commandId: randomUUID(), at: iso(now), actor: `user:${approval.userId}` })
    yield* orOwnerUnreachable(host.send(ApiKeyActor, keyId, new IssueCredential({
      keyId,
      orgId: approval.orgId,
      workspaceId: approval.workspaceId,
      createdBy: approval.userId,
      name: `CLI login (${approval.clientName})`,
      lookupId: key.lookupId,
      secretHash: key.secretHash,
      scopes: { purpose: CLI_LOGIN_PURPOSE },
      expiresAt: iso(now + CLI_LOGIN_TTL_MS),
      customRole: null,
      machineId: null,
      supersedes: null
    }), meta()))
    // Issued first, redeemed second: a crash in between leaves a key whose raw value nobody holds
    // (harmless) and the device still approved, so the CLI's next poll succeeds. A refusal here
    // (another poll redeemed it first, or the code expired meanwhile) revokes the unused key.
    yield* host.send(DeviceActor, deviceId, new RedeemDevice({ deviceId, keyId }), meta()).pipe(
      Effect.catchIf((e) => !isRetryable(e), (refusal) =>
        host.send(ApiKeyActor, keyId, new RevokeApiKey({ keyId }), { ...meta(), actor: "system" }).pipe(
          Effect.ignore,
          Effect.flatMap(() => Effect.fail(refusalOf(refusal)))
        )
      ),
      orOwnerUnreachable
    )
    return { access_token: key.raw, token_type: "Bearer" as const, key_id: keyId, expires_in: Math.floor(CLI_LOGIN_TTL_MS / 1000) } satisfies DeviceTokenResponse
  })

const refusalOf = (refusal: { readonly _tag: string }): DeviceTokenError => {
  switch (refusal._tag) {
    case "DeviceDenied":
      return tokenError("access_denied", "the CLI login was denied")
    case "DeviceCodeExpired":
      return tokenError("expired_token", "the device code has expired; start the CLI login again")
    case "DevicePending":
      return tokenError("authorization_pending", "the CLI login has not been approved yet")
    default:
      return tokenError("invalid_grant", "the device code has already been used; start the CLI login again")
  }
}

/** A device login found by the code its user typed, for the approve and deny capabilities. */
export interface DeviceByUserCode {
  readonly deviceId: string
  readonly userCode: string
  readonly clientName: string
}

const unknownCode = () => new NotFound({ reason: "device_code_not_found", message: "no CLI login shows this code; check it, or start the CLI login again" })

/**
 * The device login showing `typed`: the live one, or else the latest expired one (whose actor
 * then refuses as expired). Two live logins showing one code (a race the code route makes
 * vanishingly rare) are refused rather than guessed between.
 */
export const findDeviceByUserCode = (typed: string, now: number) =>
  Effect.gen(function* () {
    const userCode = normalizeUserCode(typed)
    if (userCode === undefined) return yield* unknownCode()
    const rows = yield* devicesByUserCode(userCode)
    const live = rows.filter((row) => millisOf(row.expires_at) > now)
    if (rows.length === 0 || live.length > 1) return yield* unknownCode()
    return { deviceId: rows[0].device_id, userCode, clientName: rows[0].client_name } satisfies DeviceByUserCode
  })
