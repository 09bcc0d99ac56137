import { Schema } from "effect"
import { SessionStarted } from "./events.ts"

const { _tag, ...startedFields } = SessionStarted.fields

export const SessionState = Schema.Union(
  Schema.TaggedStruct("Absent", {}),
  Schema.TaggedStruct("Active", startedFields),
  Schema.TaggedStruct("Ended", { ...startedFields, endedAt: Schema.String })
)
export type SessionState = typeof SessionState.Type

export const initialSessionState: SessionState = { _tag: "Absent" }
