/** Registration is all the user actor decides on so far. */
import { Schema } from "effect"

export const UserState = Schema.Union(Schema.TaggedStruct("Absent", {}), Schema.TaggedStruct("Registered", {}))
export type UserState = typeof UserState.Type

export const initialUserState: UserState = { _tag: "Absent" }
