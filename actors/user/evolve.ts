import type { UserEvent } from "./events.ts"
import type { RegisteredUser, UserState } from "./state.ts"

export const evolve = (state: UserState, event: UserEvent): UserState => {
  if (event._tag === "user.registered") {
    return { _tag: "Registered", userId: event.userId, passwordHash: null, totpPendingSealed: null, totpSecretSealed: null, mfaEnabledAt: null, ssoIdentities: {} }
  }
  const user = registered(state, event._tag)
  switch (event._tag) {
    case "user.password_set":
      return { ...user, passwordHash: event.passwordHash }
    case "user.totp_enrolment_started":
      return { ...user, totpPendingSealed: event.secretSealed }
    case "user.mfa_enabled":
      return { ...user, totpSecretSealed: user.totpPendingSealed, totpPendingSealed: null, mfaEnabledAt: event.enabledAt }
    case "user.sso_identity_linked":
      return { ...user, ssoIdentities: { ...user.ssoIdentities, [event.providerId]: event.subject } }
  }
}

const registered = (state: UserState, type: string): RegisteredUser => {
  if (state._tag === "Registered") return state
  throw new Error(`${type} before user.registered`)
}
