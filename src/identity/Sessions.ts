/**
 * Browser sign-in: email and password (plus a TOTP code once two-factor is on), or an SSO login
 * (src/identity/Sso.ts) that ends here too. A session is an actor; its cookie is a `ses_` token of which
 * only the lookup id and hash are stored. Every sign-in and every failed one is a security event,
 * and so is a lock after too many failed ones (src/identity/Lockout.ts).
 */
import { Clock, Effect } from "effect"
import { randomUUID } from "node:crypto"
import * as OTPAuth from "otpauth"
import { AuditActor } from "../../actors/audit/actor.ts"
import { AuditLog } from "../audit/AuditLog.ts"
import { SignInFailed } from "../../actors/audit/events.ts"
import { encodeEvent, keyOf } from "../../actors/kernel.ts"
import { SessionActor } from "../../actors/session/actor.ts"
import { EndSession, StartSession } from "../../actors/session/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { AccessCache } from "../checkpoint/AccessCache.ts"
import { mintToken, newPublicId } from "./ApiKeyToken.ts"
import { SESSION_COOKIE } from "./Auth.ts"
import { Unauthorized, Unavailable } from "../platform/Errors.ts"
import { admit, countFailure, emailSubject, type Guesses, refuseWhileLocked } from "./Lockout.ts"
import { decoyPasswordHash, PlatformSecrets, verifyPassword } from "../platform/Secrets.ts"
import { orOwnerUnreachable } from "../platform/Failures.ts"
import { memberOrgIds, signInCredentialsByEmail } from "./Queries.ts"

/** A browser session lasts 12 hours from sign-in (see docs/decisions.md). */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000

export interface StartedSession {
  readonly sessionId: string
  readonly userId: string
  /** The cookie's value: returned once, in Set-Cookie, never stored. */
  readonly token: string
  readonly expiresAt: string
}

/** The organizations of an account (none for an email nobody holds): each records its security events. */
const orgIdsOf = (userId: string | null) =>
  Effect.gen(function* () {
    if (userId === null) return []
    return yield* memberOrgIds(userId)
  })

/** Starts a session for a person whose credentials have been checked. */
export const startSession = (input: {
  readonly userId: string
  readonly method: "password" | "sso"
  readonly sso: { readonly orgId: string; readonly providerId: string } | null
  readonly mfa: boolean
}) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const now = yield* Clock.currentTimeMillis
    const orgIds = yield* orgIdsOf(input.userId)
    const token = mintToken("ses_")
    const sessionId = newPublicId("ses")
    const at = new Date(now).toISOString()
    const expiresAt = new Date(now + SESSION_TTL_MS).toISOString()
    yield* orOwnerUnreachable(host.send(SessionActor, sessionId, new StartSession({
      sessionId,
      userId: input.userId,
      lookupId: token.lookupId,
      secretHash: token.secretHash,
      method: input.method,
      sso: input.sso,
      mfa: input.mfa,
      orgIds,
      expiresAt
    }), { commandId: randomUUID(), at, actor: `user:${input.userId}` }))
    return { sessionId, userId: input.userId, token: token.raw, expiresAt } satisfies StartedSession
  })

/** Records a failed sign-in in the log (and the audit logs of the account's organizations). */
const recordFailedSignIn = (attempt: { readonly email: string; readonly userId: string | null; readonly orgIds: ReadonlyArray<string> }, reason: string) =>
  Effect.gen(function* () {
    const { email, userId, orgIds } = attempt
    const audit = yield* AuditLog
    const attemptId = newPublicId("att")
    const at = new Date(yield* Clock.currentTimeMillis).toISOString()
    const { type, payload } = encodeEvent(AuditActor, new SignInFailed({ attemptId, email, userId, orgIds, reason }))
    const key = keyOf(AuditActor, attemptId)
    yield* audit.append({ key, seq: 1, firstSeq: 1, type, payload, at, commandId: attemptId, actor: userId === null ? "anonymous" : `user:${userId}` })
  }).pipe(Effect.mapError((e) => new Unavailable({ message: `sign-in record not written: ${e.message}` })))

/** Whether `code` is the TOTP code of `secret` (base32) at `now`, allowing one step of drift. */
export const totpMatches = (secret: string, code: string, now: number): boolean =>
  /^\d{6}$/.test(code) && newTotp(secret).validate({ token: code, timestamp: now, window: 1 }) !== null

export const newTotp = (secret: string, label = "svc") =>
  new OTPAuth.TOTP({ issuer: "svc", label, algorithm: "SHA1", digits: 6, period: 30, secret: OTPAuth.Secret.fromBase32(secret) })

/**
 * Email and password, and a TOTP code when the person has two-factor on, from the client at
 * `address`. Guesses are guarded per email and per address (src/identity/Lockout.ts): while either is
 * locked, every attempt is refused with 429 before the password is checked, and a right password
 * is refused like a wrong one.
 */
export const signInWithPassword = (input: { readonly email: string; readonly password: string; readonly code?: string | undefined }, address: string | null) =>
  Effect.gen(function* () {
    const secrets = yield* PlatformSecrets
    const email = input.email.trim().toLowerCase()
    const user = yield* signInCredentialsByEmail(email)
    const userId: string | null = user?.user_id ?? null
    // an email nobody holds is guarded like one somebody does: a lock must not tell them apart
    const guesses: Guesses = { flow: "sign_in", account: emailSubject(email), address }
    const attempt = orgIdsOf(userId).pipe(Effect.map((orgIds) => ({ email, userId, orgIds })))
    const failed = (reason: string) =>
      Effect.flatMap(attempt, (who) => Effect.zipRight(recordFailedSignIn(who, reason), countFailure(guesses, who, "anonymous")))
    yield* refuseWhileLocked(guesses).pipe(Effect.tapErrorTag("TooManyAttempts", () => Effect.flatMap(attempt, (who) => recordFailedSignIn(who, "locked"))))
    const hash: string | null = user?.password_hash ?? null
    const passwordOk = yield* Effect.promise(async () => verifyPassword(input.password, hash ?? (await decoyPasswordHash)))
    if (user === undefined || hash === null || !passwordOk) {
      yield* failed("invalid_credential")
      return yield* new Unauthorized({ reason: "invalid_credential", message: "the email or password is not right" })
    }
    const mfa = user.mfa_enabled_at !== null
    if (mfa) {
      if (input.code === undefined) {
        // asking for the code says the password was right: not while a lock is on
        yield* admit(guesses, false, "anonymous")
        return yield* new Unauthorized({ reason: "mfa_code_required", message: "enter the code from your authenticator app" })
      }
      const secret = user.totp_secret_sealed === null ? undefined : secrets.open(user.totp_secret_sealed)
      if (secret === undefined || !totpMatches(secret, input.code, yield* Clock.currentTimeMillis)) {
        yield* failed("mfa_code_invalid")
        return yield* new Unauthorized({ reason: "invalid_credential", message: "the two-factor code is not right" })
      }
    }
    yield* admit(guesses, true, "anonymous")
    return yield* startSession({ userId: user.user_id, method: "password", sso: null, mfa })
  })

export const signOut = (sessionId: string, userId: string) =>
  Effect.gen(function* () {
    const host = yield* ActorHost
    const accessCache = yield* AccessCache
    const at = new Date(yield* Clock.currentTimeMillis).toISOString()
    yield* orOwnerUnreachable(host.send(SessionActor, sessionId, new EndSession({ sessionId }), { commandId: randomUUID(), at, actor: `user:${userId}` }))
    // AccessCache: the cookie stops working at once on this node; elsewhere within its TTL
    accessCache.invalidateCredential(sessionId)
  })

/** The Set-Cookie value for a session (or, with no session, one that clears the cookie). */
export const sessionCookie = (session: StartedSession | null, secure: boolean): string => {
  const attributes = ["Path=/", "HttpOnly", "SameSite=Lax", ...(secure ? ["Secure"] : [])]
  return session === null
    ? [`${SESSION_COOKIE}=`, "Max-Age=0", ...attributes].join("; ")
    : [`${SESSION_COOKIE}=${session.token}`, `Expires=${new Date(session.expiresAt).toUTCString()}`, ...attributes].join("; ")
}
