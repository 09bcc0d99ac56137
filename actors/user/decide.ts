import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { NoPendingTotp, SsoIdentityConflict, UserAlreadyRegistered, UserNotFound, type UserError } from "./errors.ts"
import { MfaEnabled, PasswordSet, SsoIdentityLinked, TotpEnrolmentStarted, UserRegistered, type UserEvent } from "./events.ts"
import type { UserCommand } from "./protocol.ts"
import type { UserState } from "./state.ts"

type Decision = Either.Either<ReadonlyArray<UserEvent>, UserError>

export const decide = (state: UserState, command: UserCommand, meta: CommandMeta): Decision => {
  if (command._tag === "RegisterUser") {
    const { userId, email, name } = command
    if (state._tag === "Registered") return Either.left(new UserAlreadyRegistered({ userId }))
    return Either.right([new UserRegistered({ userId, email, name, createdAt: meta.at })])
  }
  if (state._tag === "Absent") return Either.left(new UserNotFound({ userId: command.userId }))
  switch (command._tag) {
    case "SetPassword":
      return Either.right([new PasswordSet({ userId: command.userId, passwordHash: command.passwordHash })])
    case "StartTotpEnrolment":
      return Either.right([new TotpEnrolmentStarted({ userId: command.userId, secretSealed: command.secretSealed })])
    case "ConfirmTotp":
      if (state.totpPendingSealed !== command.secretSealed) return Either.left(new NoPendingTotp({ userId: command.userId }))
      return Either.right([new MfaEnabled({ userId: command.userId, enabledAt: meta.at })])
    case "LinkSsoIdentity": {
      const { userId, orgId, providerId, subject } = command
      const linked = Object.hasOwn(state.ssoIdentities, providerId) ? state.ssoIdentities[providerId] : undefined
      if (linked === subject) return Either.right([])
      if (linked !== undefined) return Either.left(new SsoIdentityConflict({ userId, providerId }))
      return Either.right([new SsoIdentityLinked({ userId, orgId, providerId, subject, linkedAt: meta.at })])
    }
  }
}
