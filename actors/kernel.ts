/**
 * What every actor kind is made of. Deciders and evolvers are pure and synchronous: time, ids and
 * the acting principal arrive in the command's metadata.
 */
import { type Either, Schema } from "effect"

/** Metadata that travels with every command and ends up on every event it causes. */
export interface CommandMeta {
  readonly commandId: string
  /** ISO 8601. */
  readonly at: string
  /** `user:<id>`, `key:<id>` or `system`. */
  readonly actor: string
}

export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [k: string]: Json }

/** Any JSON value (a tool's input, a turn's result, an A2A data part). */
export const Json: Schema.Schema<Json> = Schema.Union(
  Schema.Null,
  Schema.Boolean,
  Schema.Number,
  Schema.String,
  Schema.Array(Schema.suspend(() => Json)),
  Schema.Record({ key: Schema.String, value: Schema.suspend(() => Json) })
  // named, so that tool schemas (MCP, the agent, OpenAPI) can refer to it as `$defs/Json`
).annotations({ identifier: "Json" })

/** A read-model row operation. The projection runner coalesces them per table and primary key. */
export type RowOp =
  | {
      readonly op: "upsert"
      readonly table: string
      /** Primary-key columns; `row` holds every column of the table. */
      readonly pk: ReadonlyArray<string>
      readonly row: Readonly<Record<string, Json>>
    }
  | {
      readonly op: "delete"
      readonly table: string
      readonly pk: ReadonlyArray<string>
      readonly row: Readonly<Record<string, Json>>
    }
  | {
      /** Append-only rows (audit, metering); a duplicate primary key is ignored. */
      readonly op: "insert"
      readonly table: string
      readonly pk: ReadonlyArray<string>
      readonly row: Readonly<Record<string, Json>>
    }

/** Where an event sits, for projections that record it. */
export interface EventContext {
  readonly key: string
  readonly seq: number
  readonly at: string
  readonly actor: string
  readonly commandId: string
}

export interface ActorKind<S, C extends { readonly _tag: string }, E extends { readonly _tag: string }, Err> {
  /** Key prefix: keys of this kind are `<kind>:<id>`. */
  readonly kind: string
  readonly initialState: S
  /** Persisted as JSON between owners (the `actor_state` read model). */
  readonly state: Schema.Schema<S, any>
  /** Commands cross the commands topic when routed to another node. */
  readonly commands: Schema.Schema<C, any>
  /** Events: `_tag` is the published event type and is never renamed. */
  readonly events: Schema.Schema<E, any>
  /** Rejections cross the reply channel. */
  readonly errors: Schema.Schema<Err, any>
  readonly decide: (state: S, command: C, meta: CommandMeta) => Either.Either<ReadonlyArray<E>, Err>
  readonly evolve: (state: S, event: E) => S
  /** Read-model rows that follow from an applied event, given the state after it. */
  readonly project: (after: S, event: E, ctx: EventContext) => ReadonlyArray<RowOp>
  /**
   * Set for kinds whose every key holds exactly one event written directly by its single writer
   * (audit records): no state is kept between events and no decision is made.
   */
  readonly stateless?: boolean
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyActorKind = ActorKind<any, any, any, any>

export const keyOf = (kind: { readonly kind: string }, id: string): string => `${kind.kind}:${id}`

export const kindOfKey = (key: string): string => {
  const colon = key.indexOf(":")
  return colon === -1 ? key : key.slice(0, colon)
}

/** An event as it sits in the log: `_tag` becomes the record's type, the rest its payload. */
export const encodeEvent = (kind: AnyActorKind, event: { readonly _tag: string }): { type: string; payload: unknown } => {
  const { _tag, ...payload } = Schema.encodeSync(kind.events)(event) as { _tag: string }
  return { type: _tag, payload }
}

export const decodeEvent = (kind: AnyActorKind, type: string, payload: unknown): { readonly _tag: string } =>
  Schema.decodeUnknownSync(kind.events)({ ...(payload as object), _tag: type })

/** The actor kinds a process knows, by key prefix. */
export type KindRegistry = ReadonlyMap<string, AnyActorKind>

export const kindRegistry = (kinds: ReadonlyArray<AnyActorKind>): KindRegistry => new Map(kinds.map((k) => [k.kind, k]))
