/**
 * Decider specifications in Emmett's style, driven by an `ActorKind`:
 *
 *   spec(NodeActor).given([created]).when(update).then([updated])
 *
 * Events and errors are compared in their encoded (JSON) form, which is what the log and the reply
 * channel carry; a value that cannot be encoded fails the spec.
 */
import { Effect, Either, type ParseResult, Schema } from "effect"
import { expect } from "vitest"
import type { ActorKind, CommandMeta, Json } from "../../actors/kernel.ts"

type Tagged = { readonly _tag: string }

export const meta = (overrides: Partial<CommandMeta> = {}): CommandMeta => ({
  commandId: "cmd-1",
  at: "2024-05-01T12:00:00.000Z",
  actor: "user:u1",
  ...overrides
})

export const spec = <S, C extends Tagged, E extends Tagged, Err extends Tagged>(kind: ActorKind<S, C, E, Err>) => {
  const encodeEvents = Schema.encodeSync(Schema.Array(kind.events))
  const encodeError = Schema.encodeSync(kind.errors)
  const show = (value: unknown) => JSON.stringify(value)
  return {
    given: (history: ReadonlyArray<E>) => ({
      when: (command: C, commandMeta: CommandMeta = meta()) => {
        const result = kind.decide(history.reduce(kind.evolve, kind.initialState), command, commandMeta)
        const events = (): ReadonlyArray<E> =>
          Either.getOrElse(result, (error) => expect.fail(`expected events, got ${show(encodeError(error))}`))
        return {
          then: (expected: ReadonlyArray<E>) => expect(encodeEvents(events())).toEqual(encodeEvents(expected)),
          thenNothingHappened: () => expect(encodeEvents(events())).toEqual([]),
          /** A tag, a predicate, or the exact error (tag and every field). */
          thenThrows: (expected: Err["_tag"] | ((error: Err) => boolean) | Err) => {
            if (Either.isRight(result)) expect.fail(`expected a rejection, got ${show(encodeEvents(result.right))}`)
            const error = result.left
            if (typeof expected === "string") expect(error._tag).toBe(expected)
            else if (typeof expected === "function") expect(expected(error), show(encodeError(error))).toBe(true)
            else expect(encodeError(error)).toEqual(encodeError(expected))
          }
        }
      }
    })
  }
}

/**
 * The read-model rows after `history` (each event with its time), folded through `evolve` and
 * `project` of one actor key and applied the way the projection runner applies row operations.
 * Returns every touched table's rows ordered by primary key.
 */
export const projectedRows = <S, C extends Tagged, E extends Tagged, Err>(
  kind: ActorKind<S, C, E, Err>,
  key: string,
  history: ReadonlyArray<readonly [event: E, at: string]>
): Record<string, ReadonlyArray<Readonly<Record<string, Json>>>> => {
  const tables = new Map<string, Map<string, Readonly<Record<string, Json>>>>()
  let state = kind.initialState
  history.forEach(([event, at], index) => {
    state = kind.evolve(state, event)
    const ctx = { key, seq: index + 1, at, actor: "system", commandId: `cmd-${index + 1}` }
    for (const op of kind.project(state, event, ctx)) {
      const rows = tables.get(op.table) ?? new Map()
      tables.set(op.table, rows)
      const pk = JSON.stringify(op.pk.map((column) => op.row[column]))
      if (op.op === "delete") rows.delete(pk)
      else if (op.op === "upsert" || !rows.has(pk)) rows.set(pk, op.row)
    }
  })
  return Object.fromEntries(
    [...tables].map(([table, rows]) => [
      table,
      [...rows].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row)
    ])
  )
}

/** Encodes `value`, sends it through JSON text as the log does, and decodes it back. */
export const jsonRoundTrip = <A, I>(schema: Schema.Schema<A, I>, value: A): Effect.Effect<A, ParseResult.ParseError> =>
  Schema.encode(schema)(value).pipe(
    Effect.map((encoded) => JSON.parse(JSON.stringify(encoded)) as unknown),
    Effect.flatMap(Schema.decodeUnknown(schema))
  )
