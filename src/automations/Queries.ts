/**
 * The automations wing's SQL: its read models `automations` and `automation_runs` (projected from
 * the `automation` and `automation_run` actors), the runs' actor state, and the reaction's saved
 * offsets (`reaction_offsets`).
 */
import { Effect } from "effect"
import type { EventTrigger } from "../../actors/automation/definition.ts"
import { AutomationRunActor } from "../../actors/automationrun/actor.ts"
import type { AutomationRunState } from "../../actors/automationrun/state.ts"
import { keyOf } from "../../actors/kernel.ts"
import { Db, query } from "../../streams/Db.ts"
import { decodeState } from "../../streams/Projector.ts"
import { runRow } from "../../actors/automationrun/project.ts"
import type { Run as RunState } from "../../actors/automationrun/state.ts"
import type { Automation, ListedAutomation, Run } from "./Api.ts"

const iso = (value: Date | string | null) => (value === null ? null : value instanceof Date ? value.toISOString() : value)

const toAutomation = (row: Record<string, any>): Automation => ({
  automationId: row.automation_id,
  name: row.name,
  description: row.description,
  trigger: row.trigger,
  steps: row.steps,
  enabled: row.enabled,
  origin: row.origin,
  createdAt: iso(row.created_at)!,
  updatedAt: iso(row.updated_at)!,
  version: row.version,
  revision: row.revision,
  enabledBy: row.enabled_by
})

const toRun = (row: Record<string, any>): Run => ({
  runId: row.run_id,
  status: row.status,
  trigger: row.trigger,
  steps: row.steps,
  error: row.error,
  createdAt: iso(row.created_at)!,
  startedAt: iso(row.started_at),
  endedAt: iso(row.ended_at)
})

/** How many of the workspace's automations other than this one are enabled with a schedule trigger. */
export const otherEnabledSchedules = (workspaceId: string, automationId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [{ others }] = yield* query("enabled schedules", () => db.sql`
      select count(*)::int as others from ${db.table("automations")}
      where workspace_id = ${workspaceId} and trigger_type = 'schedule' and enabled and automation_id <> ${automationId}`)
    return others as number
  })

/** An automation, if it lives in the workspace. */
export const findAutomation = (workspaceId: string, automationId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("read automation", () => db.sql`
      select * from ${db.table("automations")} where workspace_id = ${workspaceId} and automation_id = ${automationId}`)
    return row === undefined ? undefined : toAutomation(row)
  })

/** The automation's latest `count` runs, newest first. */
export const recentRuns = (automationId: string, count: number) =>
  Effect.gen(function* () {
    const db = yield* Db
    const runs = yield* query("recent runs", () => db.sql`
      select * from ${db.table("automation_runs")} where automation_id = ${automationId}
      order by created_at desc, run_id desc limit ${count}`)
    return runs.map(toRun)
  })

/** The ids of the automation's latest `count` runs created at or before `at` (any time: undefined), newest first. */
export const recentRunIds = (automationId: string, at: Date | undefined, count: number) =>
  Effect.gen(function* () {
    const db = yield* Db
    const runs = yield* query("recent run ids", () => db.sql`
      select run_id from ${db.table("automation_runs")}
      where automation_id = ${automationId} ${at === undefined ? db.sql`` : db.sql`and created_at <= ${at}`}
      order by created_at desc, run_id desc limit ${count}`)
    return runs.map((r) => r.run_id as string)
  })

/** A run as its read-model row shows it, from the run's state (an as-of read folds it from the log). */
export const runOfState = (run: RunState): Run => toRun(runRow(run))

/** Up to `rows` of the workspace's automations (only enabled or disabled ones, if given) after the
 * id `after`, by id, each with its latest run. */
export const automationsAfter = (workspaceId: string, enabled: boolean | undefined, after: string | undefined, rows: number) =>
  Effect.gen(function* () {
    const db = yield* Db
    const found = yield* query("list automations", () => db.sql`
      select a.*, r.run_id as last_run_id, r.status as last_run_status, r.created_at as last_run_created_at, r.ended_at as last_run_ended_at
      from ${db.table("automations")} a
      left join lateral (
        select run_id, status, created_at, ended_at from ${db.table("automation_runs")} r
        where r.automation_id = a.automation_id order by created_at desc, run_id desc limit 1
      ) r on true
      where a.workspace_id = ${workspaceId}
        ${enabled === undefined ? db.sql`` : db.sql`and a.enabled = ${enabled}`}
        ${after === undefined ? db.sql`` : db.sql`and a.automation_id > ${after}`}
      order by a.automation_id limit ${rows}`)
    return found.map((row): ListedAutomation => ({
      ...toAutomation(row),
      lastRun: row.last_run_id === null
        ? null
        : { runId: row.last_run_id, status: row.last_run_status, createdAt: iso(row.last_run_created_at)!, endedAt: iso(row.last_run_ended_at) }
    }))
  })

/** A run and its automation's id, if it lives in the workspace. */
export const findRun = (workspaceId: string, runId: string) =>
  Effect.gen(function* () {
    const db = yield* Db
    const [row] = yield* query("read run", () => db.sql`
      select * from ${db.table("automation_runs")} where run_id = ${runId} and workspace_id = ${workspaceId}`)
    return row === undefined ? undefined : { ...toRun(row), automationId: row.automation_id as string }
  })

/** An enabled automation watching node events. */
export interface Watcher {
  readonly automationId: string
  readonly workspaceId: string
  readonly trigger: EventTrigger
}

/** The enabled automations watching node events in these workspaces. */
export const watchersIn = (workspaceIds: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("automations watching", () => db.sql`
      select automation_id, workspace_id, trigger from ${db.table("automations")}
      where trigger_type = 'event' and enabled and workspace_id in ${db.sql(workspaceIds)}`)
    return rows.map((r): Watcher => ({ automationId: r.automation_id, workspaceId: r.workspace_id, trigger: r.trigger }))
  })

/** Where the reaction got in each of these partitions: partition -> the next offset to read. */
export const reactionOffsets = (reaction: string, partitions: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const db = yield* Db
    const rows = yield* query("reaction offsets", () => db.sql`
      select partition, next from ${db.table("reaction_offsets")} where reaction = ${reaction} and partition in ${db.sql(partitions)}`)
    return new Map(rows.map((r) => [Number(r.partition), Number(r.next)]))
  })

export const saveReactionOffset = (reaction: string, partition: number, next: number) =>
  Effect.flatMap(Db, (db) =>
    query("save reaction offset", () => db.sql`
      insert into ${db.table("reaction_offsets")} (reaction, partition, next) values (${reaction}, ${partition}, ${next})
      on conflict (reaction, partition) do update set next = excluded.next`)
  )

/** A run's state as its actor last stored it; undefined before it is created. */
export const runState = (runId: string) =>
  Effect.flatMap(Db, (db) =>
    query("scheduled run", () => db.sql`select state from ${db.table("actor_state")} where key = ${keyOf(AutomationRunActor, runId)}`)
  ).pipe(Effect.map(([row]) => (row === undefined ? undefined : (decodeState(AutomationRunActor, row.state) as AutomationRunState))))

/** The ids of the runs still running or waiting (the table is small: only what is live). */
export const activeRunIds = () =>
  Effect.flatMap(Db, (db) => query("active runs", () => db.sql`select run_id from ${db.table("automation_runs")} where status in ('running', 'waiting')`)).pipe(
    Effect.map((rows) => rows.map((r) => r.run_id as string))
  )

/** The ids of the enabled automations with a schedule trigger. */
export const scheduledAutomationIds = () =>
  Effect.flatMap(Db, (db) =>
    query("scheduled automations", () => db.sql`
      select automation_id from ${db.table("automations")} where trigger_type = 'schedule' and enabled`)
  ).pipe(Effect.map((rows) => rows.map((r) => r.automation_id as string)))
