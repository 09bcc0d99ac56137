/** Read model: `users`. */
import type { RowOp } from "../kernel.ts"
import type { UserEvent } from "./events.ts"
import type { UserState } from "./state.ts"

export const project = (_after: UserState, event: UserEvent): ReadonlyArray<RowOp> => [
  {
    op: "upsert",
    table: "users",
    pk: ["user_id"],
    row: { user_id: event.userId, email: event.email, name: event.name, created_at: event.createdAt }
  }
]
