import type { UserEvent } from "./events.ts"
import type { UserState } from "./state.ts"

export const evolve = (_state: UserState, _event: UserEvent): UserState => ({ _tag: "Registered" })
