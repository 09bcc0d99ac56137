/** A minimal actor kind for exercising the runtime itself: a counter with a ceiling. */
import { Either, Schema } from "effect"
import type { ActorKind } from "../../actors/kernel.ts"

export class Add extends Schema.TaggedClass<Add>()("Add", { amount: Schema.Int }) {}
export class Added extends Schema.TaggedClass<Added>()("counter.added", { amount: Schema.Int, total: Schema.Int }) {}
export class OverCeiling extends Schema.TaggedError<OverCeiling>()("OverCeiling", { total: Schema.Int }) {}

const State = Schema.Struct({ total: Schema.Int })
type State = typeof State.Type

export const CEILING = 1_000_000

export const CounterActor: ActorKind<State, Add, Added, OverCeiling> = {
  kind: "counter",
  initialState: { total: 0 },
  state: State,
  commands: Add,
  events: Added,
  errors: OverCeiling,
  decide: (state, command) =>
    state.total + command.amount > CEILING
      ? Either.left(new OverCeiling({ total: state.total }))
      : Either.right([new Added({ amount: command.amount, total: state.total + command.amount })]),
  evolve: (_, event) => ({ total: event.total }),
  project: (after, _event, ctx) => [
    { op: "upsert", table: "counters", pk: ["key"], row: { key: ctx.key, total: after.total, seq: ctx.seq, updated_at: ctx.at } }
  ]
}

export const countersTable = (schema: string) =>
  `create table if not exists ${schema}.counters (key text primary key, total integer not null, seq integer not null, updated_at timestamptz not null)`
