import { Either } from "effect"
import type { CommandMeta } from "../kernel.ts"
import { UserAlreadyRegistered, type UserError } from "./errors.ts"
import { UserRegistered, type UserEvent } from "./events.ts"
import type { UserCommand } from "./protocol.ts"
import type { UserState } from "./state.ts"

export const decide = (
  state: UserState,
  command: UserCommand,
  meta: CommandMeta
): Either.Either<ReadonlyArray<UserEvent>, UserError> => {
  const { userId, email, name } = command
  switch (state._tag) {
    case "Absent":
      return Either.right([new UserRegistered({ userId, email, name, createdAt: meta.at })])
    case "Registered":
      return Either.left(new UserAlreadyRegistered({ userId }))
  }
}
