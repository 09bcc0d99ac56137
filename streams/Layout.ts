/**
 * The log's layout: which generation of the log the nodes use, with its partition count. A log is
 * created with a partition count (`LOG_PARTITIONS`); `svc log repartition` rewrites it into a new
 * generation with more partitions, kept apart from the old one (embedded: the schema
 * `<log schema>_g<N>`; Kafka: the topics `<prefix>.g<N>.*`), and switches to it by one Postgres
 * transaction that also moves the read models' checkpoints to the new log.
 *
 * The layout is a table, `<log schema>.log_layout`, one row per generation and log (`embedded`, or
 * `kafka:<prefix>`): `current` (the one nodes use), `retired` (an earlier one, kept until the
 * operator removes it) or `building` (a rewrite under way, or one that stopped before switching).
 * A log never repartitioned has no row: generation 1, its partition count as configured.
 */
import { Data, Effect } from "effect"
import type postgres from "postgres"

export type GenerationState = "current" | "retired" | "building"

export interface Generation {
  readonly generation: number
  readonly partitions: number
  /** The embedded log's schema, or Kafka's topic prefix, of this generation. */
  readonly name: string
  readonly state: GenerationState
}

/** Where a log's layout is recorded. */
export interface LayoutPlace {
  readonly sql: postgres.Sql
  /** The schema holding `log_layout`: the embedded log's first schema (`svc_log`, `<DB_SCHEMA>_log`). */
  readonly schema: string
  /** `embedded`, or `kafka:<topic prefix>`. */
  readonly log: string
  /** Generation 1's name: the embedded log's schema, or the configured topic prefix. */
  readonly baseName: string
  readonly mode: "embedded" | "kafka"
}

export class LayoutError extends Data.TaggedError("LayoutError")<{ readonly message: string; readonly cause?: unknown }> {}

/** The name of a generation's log: generation 1 keeps the configured one. */
export const generationName = (place: Pick<LayoutPlace, "baseName" | "mode">, generation: number): string =>
  generation === 1 ? place.baseName : place.mode === "embedded" ? `${place.baseName}_g${generation}` : `${place.baseName}.g${generation}`

const layoutTable = (place: LayoutPlace) => place.sql(`${place.schema}.log_layout`)

const tryLayout = <A>(what: string, run: () => Promise<A>) =>
  Effect.tryPromise({ try: run, catch: (cause) => new LayoutError({ message: `${what} failed: ${String(cause)}`, cause }) })

/** Every generation recorded, oldest first; none for a log never repartitioned. */
export const generations = (place: LayoutPlace): Effect.Effect<ReadonlyArray<Generation>, LayoutError> =>
  tryLayout("read the log layout", async () => {
    const [{ exists }] = await place.sql`select to_regclass(${`${place.schema}.log_layout`}) is not null as exists`
    if (!exists) return []
    const rows = await place.sql`
      select generation, partitions, name, state from ${layoutTable(place)} where log = ${place.log} order by generation`
    return rows.map((r): Generation => ({ generation: r.generation, partitions: r.partitions, name: r.name, state: r.state }))
  })

/** The generation in use: the current row, else generation 1 as configured. */
export const currentGeneration = (place: LayoutPlace, configuredPartitions: number) =>
  Effect.map(generations(place), (all): Generation =>
    all.find((g) => g.state === "current") ?? { generation: 1, partitions: configuredPartitions, name: place.baseName, state: "current" }
  )

/**
 * What a node (or a command that reads or writes the log) uses: the current generation, refused
 * when LOG_PARTITIONS is not its partition count, rather than read or write a mixed layout.
 */
export const resolveLayout = (place: LayoutPlace, configuredPartitions: number) =>
  Effect.flatMap(currentGeneration(place, configuredPartitions), (current) =>
    current.partitions === configuredPartitions
      ? Effect.succeed(current)
      : Effect.fail(
          new LayoutError({
            message: `the log was repartitioned into ${current.partitions} partitions (generation ${current.generation}, ${current.name}), ` +
              `but LOG_PARTITIONS is ${configuredPartitions}: start every node with LOG_PARTITIONS=${current.partitions}`
          })
        )
  )

/**
 * Records a new generation, `building`, after every generation recorded (one a stopped rewrite
 * left behind included, so that its tables or topics are never written again): its number. A log
 * never repartitioned first gets its generation 1 recorded, current.
 */
export const beginGeneration = (place: LayoutPlace, current: Generation, partitions: number) =>
  tryLayout("record the new generation", () =>
    place.sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(hashtext(${`svc-layout:${place.schema}:${place.log}`}))`
      await tx.unsafe(`create schema if not exists ${place.schema}`)
      await tx`create table if not exists ${layoutTable(place)} (
        log text not null,
        generation integer not null,
        partitions integer not null,
        name text not null,
        state text not null,
        created_at timestamptz not null default now(),
        primary key (log, generation))`
      await tx`insert into ${layoutTable(place)} (log, generation, partitions, name, state)
        values (${place.log}, ${current.generation}, ${current.partitions}, ${current.name}, 'current') on conflict do nothing`
      const [{ last }] = await tx`select max(generation)::int as last from ${layoutTable(place)} where log = ${place.log}`
      const generation = (last as number) + 1
      await tx`insert into ${layoutTable(place)} (log, generation, partitions, name, state)
        values (${place.log}, ${generation}, ${partitions}, ${generationName(place, generation)}, 'building')`
      return generation
    })
  )

export interface Switch {
  readonly from: Generation
  readonly to: number
  /** The read models' schema (`DB_SCHEMA`), whose checkpoints move to the new log. */
  readonly liveSchema: string
  /** The old log's end offsets, where the read models' checkpoints must stand. */
  readonly oldEnds: ReadonlyMap<number, number>
  /** The new log's end offsets: the read models' checkpoints from now on. */
  readonly newEnds: ReadonlyMap<number, number>
  /** Each reaction's next offset per partition of the new log (`reaction_offsets`). */
  readonly reactions: ReadonlyMap<string, ReadonlyMap<number, number>>
}

/**
 * The switch, in one transaction: the read models' projection checkpoints (which must still stand
 * at the old log's end: no node ran meanwhile) and the reactions' offsets move to the new log, the
 * new generation becomes current and the old one retired. Nodes started after it use the new log.
 */
export const switchGeneration = (place: LayoutPlace, change: Switch) =>
  tryLayout("switch to the new log", () =>
    place.sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(hashtext(${`svc-layout:${place.schema}:${place.log}`}))`
      const [current] = await tx`select generation from ${layoutTable(place)} where log = ${place.log} and state = 'current' for update`
      if (current?.generation !== change.from.generation) throw new Error(`generation ${change.from.generation} is no longer the current one`)
      const checkpoints = tx(`${change.liveSchema}.projection_checkpoints`)
      const held = await tx`select partition, next_offset from ${checkpoints} for update`
      const behind = held.filter((r) => Number(r.next_offset) !== (change.oldEnds.get(r.partition as number) ?? 0))
      if (held.length === 0 && [...change.oldEnds.values()].some((end) => end > 0)) throw new Error("the read models hold no projection checkpoints")
      if (behind.length > 0) {
        throw new Error(`the read models no longer stand at the old log's end (partitions ${behind.map((r) => r.partition).join(", ")}): was a node started?`)
      }
      await tx`delete from ${checkpoints}`
      const partitions = [...change.newEnds.keys()]
      await tx`insert into ${checkpoints} (partition, next_offset)
        select * from unnest(${partitions}::int[], ${partitions.map((p) => change.newEnds.get(p)!)}::bigint[])`
      const reactionOffsets = tx(`${change.liveSchema}.reaction_offsets`)
      await tx`delete from ${reactionOffsets}`
      for (const [reaction, next] of change.reactions) {
        const ps = [...next.keys()]
        await tx`insert into ${reactionOffsets} (reaction, partition, next)
          select ${reaction}, p, n from unnest(${ps}::int[], ${ps.map((p) => next.get(p)!)}::bigint[]) as t(p, n)`
      }
      await tx`update ${layoutTable(place)} set state = 'retired' where log = ${place.log} and generation = ${change.from.generation}`
      await tx`update ${layoutTable(place)} set state = 'current' where log = ${place.log} and generation = ${change.to}`
    })
  )

/** Each reaction's next offset per partition (`reaction_offsets` of the read models' schema). */
export const reactionOffsets = (sql: postgres.Sql, liveSchema: string) =>
  tryLayout("read the reactions' offsets", async () => {
    const rows = await sql`select reaction, partition, next from ${sql(`${liveSchema}.reaction_offsets`)}`
    const byReaction = new Map<string, Map<number, number>>()
    for (const r of rows) {
      const of = byReaction.get(r.reaction) ?? new Map<number, number>()
      of.set(r.partition as number, Number(r.next))
      byReaction.set(r.reaction, of)
    }
    return byReaction
  })
